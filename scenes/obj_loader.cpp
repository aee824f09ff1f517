#include "scenes/obj_loader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "kernels/runtime/errors.h"
#include "scenes/scene.h"
#include "scenes/shipped_assets.h"

// tinyobjloader is header-only; this is the one translation unit that compiles its body.
#define TINYOBJLOADER_IMPLEMENTATION
#include <tiny_obj_loader.h>

namespace weft {
namespace {

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f MB", bytes / 1e6);
  return text;
}

std::string readWholeFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw Error("OBJ file '" + path + "' does not exist; check the path.");
  if (std::filesystem::is_directory(status))
    throw Error("OBJ file '" + path + "' is a directory, not a file; pass the .obj file itself.");
  // Checked before reading: parsing holds the text and its numbers, about 4x the file's size.
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxObjFileBytes)
    throw Error("OBJ file '" + path + "' is " + megabytes(double(size)) +
                "; Weft reads cloth meshes up to " + megabytes(double(kMaxObjFileBytes)) +
                " (about " + std::to_string(kMaxObjVertices / 1000000) +
                " million vertices); decimate the mesh.");
  if (const size_t available = availableHostMemory(); !ec && available > 0 && 4 * size > available)
    throw Error("OBJ file '" + path + "' is " + megabytes(double(size)) +
                "; reading it needs about " + megabytes(4.0 * double(size)) +
                " of memory and this machine has " + megabytes(double(available)) + " available.");
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error("OBJ file '" + path + "' cannot be opened (" + std::strerror(errno) +
                "); check its permissions.");
  std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (file.bad()) throw Error("OBJ file '" + path + "' could not be read to the end.");
  return text;
}

/// A first pass over the lines, before tinyobjloader allocates anything: counts the `v` and `f`
/// lines against the limits, notes each face's line number (for messages), checks that every `f`
/// line has at least three corners (tinyobjloader drops a shorter face without a word), and checks
/// every `v` line, because tinyobjloader turns a coordinate it cannot parse ("nan", "1,5", "abc")
/// into 0 without a word: at least three tokens, each a finite float.
std::vector<int> scanLines(const std::string& path, const std::string& text) {
  std::vector<int> faceLines;
  size_t vertices = 0;
  size_t begin = 0;
  for (int lineNumber = 1; begin < text.size(); ++lineNumber) {
    size_t stop = text.find('\n', begin);
    if (stop == std::string::npos) stop = text.size();
    const std::string_view line(text.data() + begin, stop - begin);
    begin = stop + 1;
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || start + 1 >= line.size() ||
        (line[start + 1] != ' ' && line[start + 1] != '\t'))
      continue;
    if (line[start] == 'f') {
      if (faceLines.size() == kMaxObjFaces)
        throw Error("OBJ file '" + path + "' has more than " + std::to_string(kMaxObjFaces) +
                    " faces (line " + std::to_string(lineNumber) +
                    "); Weft reads cloth meshes up to that size; decimate the mesh.");
      faceLines.push_back(lineNumber);
      std::istringstream tokens{std::string(line.substr(start + 2))};
      std::string token;
      int corners = 0;
      while (tokens >> token && token[0] != '#') ++corners;
      if (corners < 3)
        throw Error("OBJ file '" + path + "': face " + std::to_string(faceLines.size()) +
                    " (line " + std::to_string(lineNumber) + ") has " + std::to_string(corners) +
                    (corners == 1 ? " vertex" : " vertices") +
                    "; a face needs at least 3. Remove it or fix it.");
      continue;
    }
    if (line[start] != 'v') continue;
    if (++vertices > kMaxObjVertices)
      throw Error("OBJ file '" + path + "' has more than " + std::to_string(kMaxObjVertices) +
                  " vertices (line " + std::to_string(lineNumber) +
                  "); Weft reads cloth meshes up to that size; decimate the mesh.");
    std::istringstream tokens{std::string(line.substr(start + 2))};
    std::string token;
    for (int axis = 0; axis < 3; ++axis) {
      const std::string where = "OBJ file '" + path + "', line " + std::to_string(lineNumber);
      if (!(tokens >> token))
        throw Error(where + ": a vertex needs three coordinates (\"v x y z\").");
      // from_chars is locale-independent; it does not take a leading '+', OBJ writers may.
      const char* first = token.data() + (token[0] == '+' ? 1 : 0);
      const char* end = token.data() + token.size();
      double value = 0.0;
      const auto [stopped, error] = std::from_chars(first, end, value);
      if (stopped != end || (error != std::errc() && error != std::errc::result_out_of_range))
        throw Error(where + ": vertex coordinate '" + token + "' is not a number.");
      if (error == std::errc::result_out_of_range || !std::isfinite(value) ||
          std::fabs(value) > double(std::numeric_limits<float>::max()))
        throw Error(where + ": vertex coordinate '" + token +
                    "' is not a finite single-precision number; fix the file.");
    }
  }
  return faceLines;
}

/// Splits one polygon (vertex ids, in the face's order) into triangles with the same winding.
/// A quad is cut along its shorter diagonal (as tinyobjloader does); a larger polygon is ear
/// clipped in the plane of its Newell normal, which handles non-convex faces; if no ear is found
/// (a self-intersecting or degenerate face) the rest becomes a fan.
void triangulatePolygon(const std::vector<int>& polygon, const std::vector<Vec3>& vertices,
                        std::vector<Int3>& out) {
  const size_t n = polygon.size();
  const auto at = [&](size_t k) { return vertices[size_t(polygon[k])]; };
  if (n == 3) {
    out.push_back({polygon[0], polygon[1], polygon[2]});
    return;
  }
  if (n == 4) {
    if (lengthSquared(at(2) - at(0)) < lengthSquared(at(3) - at(1))) {
      out.push_back({polygon[0], polygon[1], polygon[2]});
      out.push_back({polygon[0], polygon[2], polygon[3]});
    } else {
      out.push_back({polygon[0], polygon[1], polygon[3]});
      out.push_back({polygon[1], polygon[2], polygon[3]});
    }
    return;
  }

  // Newell normal; project onto (u, w) with w = normal × u so the face is counter-clockwise.
  Vec3 normal;
  for (size_t k = 0; k < n; ++k) {
    const Vec3 a = at(k), b = at((k + 1) % n);
    normal += Vec3{(a.y - b.y) * (a.z + b.z), (a.z - b.z) * (a.x + b.x), (a.x - b.x) * (a.y + b.y)};
  }
  normal = normalizeOrZero(normal);
  const Vec3 helper = std::fabs(normal.x) < 0.9f ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
  const Vec3 u = normalizeOrZero(cross(helper, normal));
  const Vec3 w = cross(normal, u);
  struct Point {
    double x, y;
  };
  std::vector<Point> points(n);
  for (size_t k = 0; k < n; ++k) points[k] = {dot(at(k), u), dot(at(k), w)};
  const auto cross2 = [&](size_t a, size_t b, size_t c) {
    return (points[b].x - points[a].x) * (points[c].y - points[a].y) -
           (points[b].y - points[a].y) * (points[c].x - points[a].x);
  };

  std::vector<size_t> remaining(n);
  for (size_t k = 0; k < n; ++k) remaining[k] = k;
  while (remaining.size() > 3 && !(normal == Vec3{})) {
    bool clipped = false;
    const size_t m = remaining.size();
    for (size_t i = 0; i < m && !clipped; ++i) {
      const size_t a = remaining[(i + m - 1) % m], b = remaining[i], c = remaining[(i + 1) % m];
      if (cross2(a, b, c) <= 0.0) continue;  // reflex or flat corner: not an ear
      bool blocked = false;
      for (size_t j = 0; j < m && !blocked; ++j) {
        const size_t p = remaining[j];
        if (p == a || p == b || p == c) continue;
        blocked = cross2(a, b, p) >= 0.0 && cross2(b, c, p) >= 0.0 && cross2(c, a, p) >= 0.0;
      }
      if (blocked) continue;
      out.push_back({polygon[a], polygon[b], polygon[c]});
      remaining.erase(remaining.begin() + std::ptrdiff_t(i));
      clipped = true;
    }
    if (!clipped) break;
  }
  for (size_t k = 1; k + 1 < remaining.size(); ++k)
    out.push_back({polygon[remaining[0]], polygon[remaining[k]], polygon[remaining[k + 1]]});
}

}  // namespace

MeshData loadObjMesh(const std::string& path) {
  return parseObjMesh(path, readWholeFile(path));
}

MeshData loadShippedObjMesh(const std::string& name) {
  const std::optional<std::string_view> text = shippedAsset(name);
  if (!text) {
    std::string names;
    for (const std::string& n : shippedAssetNames()) names += (names.empty() ? "" : ", ") + n;
    throw Error("no shipped mesh is called '" + name + "' (compiled in: " + names + ").");
  }
  return parseObjMesh("assets/" + name, std::string(*text));
}

MeshData parseObjMesh(const std::string& path, const std::string& text) {
  const std::vector<int> faceLines = scanLines(path, text);

  // Parsed without triangulation: tinyobjloader (2.0.0rc10) reads vertex positions while it
  // triangulates, before face indices are checked, so a bad index in a large polygon would read
  // out of bounds, and a bad quad is dropped with only a warning. We validate, then triangulate.
  tinyobj::ObjReaderConfig config;
  config.triangulate = false;
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  if (!reader.ParseFromString(text, /*mtl_text=*/"", config)) {
    std::string reason = reader.Error();
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == '.')) reason.pop_back();
    throw Error("OBJ file '" + path + "' could not be parsed: " + reason + ".");
  }
  // Warnings (missing materials, out-of-range indices) are checked below or do not matter here.

  MeshData mesh;
  const std::vector<tinyobj::real_t>& coordinates = reader.GetAttrib().vertices;
  const size_t numVertices = coordinates.size() / 3;
  mesh.vertices.reserve(numVertices);
  for (size_t i = 0; i < numVertices; ++i) {
    const Vec3 v{float(coordinates[3 * i]), float(coordinates[3 * i + 1]),
                 float(coordinates[3 * i + 2])};
    if (!isFinite(v))
      throw Error("OBJ file '" + path + "': vertex " + std::to_string(i + 1) +
                  " has a non-finite coordinate; fix the file.");
    mesh.vertices.push_back(v);
  }

  // Faces are numbered from 1 over the whole file and named by their line, as a user sees them
  // in an editor (tinyobjloader keeps the file's order across objects and groups).
  size_t faces = 0;
  for (const tinyobj::shape_t& shape : reader.GetShapes())
    faces += shape.mesh.num_face_vertices.size();
  const bool linesKnown = faces == faceLines.size();
  size_t faceNumber = 0;
  const auto faceName = [&] {
    return "face " + std::to_string(faceNumber) +
           (linesKnown ? " (line " + std::to_string(faceLines[faceNumber - 1]) + ")" : "");
  };
  std::vector<int> polygon;
  for (const tinyobj::shape_t& shape : reader.GetShapes()) {
    size_t next = 0;  // into shape.mesh.indices
    for (const unsigned int corners : shape.mesh.num_face_vertices) {
      ++faceNumber;
      polygon.clear();
      for (unsigned int k = 0; k < corners; ++k) {
        const int v = shape.mesh.indices[next++].vertex_index;
        if (v < 0 || size_t(v) >= numVertices)
          throw Error("OBJ file '" + path + "': " + faceName() + " refers to vertex " +
                      std::to_string(int64_t(v) + 1) +
                      (v < 0 ? " (after resolving a relative index)" : "") +
                      ", but the file defines " + std::to_string(numVertices) +
                      " vertices (counting from 1); fix the face indices.");
        if (std::find(polygon.begin(), polygon.end(), v) != polygon.end())
          throw Error("OBJ file '" + path + "': " + faceName() + " uses vertex " +
                      std::to_string(v + 1) + " twice; remove the face or fix its indices.");
        polygon.push_back(v);
      }
      if (polygon.size() < 3) continue;  // never: scanLines refused such a face
      triangulatePolygon(polygon, mesh.vertices, mesh.triangles);
      if (linesKnown) mesh.triangleLines.resize(mesh.triangles.size(), faceLines[faceNumber - 1]);
    }
  }
  if (mesh.triangles.empty())
    throw Error("OBJ file '" + path +
                "' has no faces ('f' lines); a cloth mesh needs at least one triangle.");
  return mesh;
}

}  // namespace weft
