// Wavefront OBJ loading for cloth meshes (any OBJ can replace a scene's procedural cloth).
//
// Only geometry is read: `v` positions and `f` faces of every object and group, merged into one
// mesh whose vertex i is the file's i-th `v` line (so vertex ids match the file, counting from 0).
// Normals, texture coordinates, materials, lines and points are ignored. Polygons are split into
// triangles that keep the face's winding: quads along the shorter diagonal, larger polygons by
// ear clipping in the polygon's own plane.
//
// Parsing is done by tinyobjloader; the loader adds the checks it lacks (it reads "nan" or a
// misspelled number as 0 and only warns about out-of-range face indices), so every malformed file
// ends in a weft::Error that names the file and, where possible, the line or face.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/math.h"

namespace weft {

/// Limits checked before anything is parsed (a larger file fails with a sentence, not an
/// allocation failure): the file's size, and its `v` and `f` lines.
inline constexpr unsigned long long kMaxObjFileBytes = 1000ull * 1000 * 1000;
inline constexpr size_t kMaxObjVertices = 10'000'000;
inline constexpr size_t kMaxObjFaces = 20'000'000;

struct MeshData {
  std::vector<Vec3> vertices;   // (numVertices) positions, in the file's units
  std::vector<Int3> triangles;  // (numTriangles) vertex ids, wound like the file's faces
  // (numTriangles) the line of the face each triangle came from, counting from 1, for messages
  // (ClothMeshParams::triangleLines); empty if the faces could not be matched to lines.
  std::vector<int> triangleLines;
};

/// Loads a Wavefront OBJ with tinyobjloader (triangulating polygons, merging all objects/groups,
/// ignoring normals/uvs/materials). Throws weft::Error naming the file (and the line, or the face
/// counting from 1 with its line) for: missing/unreadable file, a file over the limits above or
/// over a quarter of the available memory, parse errors, no faces, face indices out of range, a
/// face that repeats a vertex, non-finite coordinates.
MeshData loadObjMesh(const std::string& path);
/// The same for OBJ text already in memory; `path` only names it in errors.
MeshData parseObjMesh(const std::string& path, const std::string& text);
/// A mesh shipped in assets/ and compiled in (scenes/shipped_assets.h), e.g. "square_cloth.obj".
/// Throws weft::Error listing the shipped meshes when there is none of that name.
MeshData loadShippedObjMesh(const std::string& name);

}  // namespace weft
