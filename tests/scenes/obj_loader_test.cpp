// OBJ loading (scenes/obj_loader.h): objects and groups merged, polygons triangulated with their
// winding, and every malformed file rejected with an error that names it.
#include "scenes/obj_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "kernels/runtime/errors.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class ObjLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    const unsigned tag = std::random_device{}();
    dir_ = fs::temp_directory_path() / ("weft_obj_loader_test_" + std::to_string(tag));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string errorOf(const std::string& path) {
    try {
      loadObjMesh(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no weft::Error thrown)";
  }
  fs::path dir_;
};

// Signed area vector of triangle t, to compare windings.
Vec3 areaVector(const MeshData& mesh, const Int3& t) {
  const Vec3 a = mesh.vertices[size_t(t.x)], b = mesh.vertices[size_t(t.y)],
             c = mesh.vertices[size_t(t.z)];
  return 0.5f * cross(b - a, c - a);
}

TEST_F(ObjLoader, MergesObjectsAndTriangulatesQuadsAndTriangles) {
  const std::string path = write("mixed.obj", R"(# two objects, comments, normals and uvs
mtllib missing.mtl
o square
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vn 0 0 1
vt 0 0
usemtl cloth
# a quad
f 1/1/1 2/1/1 3/1/1 4/1/1
o triangle
g part
v 2 0 0
v 3 0 0
v 2 1 0
f 5//1 6//1 7//1
f -3 -2 -1
)");
  const MeshData mesh = loadObjMesh(path);
  ASSERT_EQ(mesh.vertices.size(), 7u);
  EXPECT_EQ(mesh.vertices[2], (Vec3{1, 1, 0}));
  EXPECT_EQ(mesh.vertices[6], (Vec3{2, 1, 0}));
  ASSERT_EQ(mesh.triangles.size(), 4u);
  double quadArea = 0.0;
  for (int t = 0; t < 2; ++t) {
    const Int3& tri = mesh.triangles[size_t(t)];
    for (int v : {tri.x, tri.y, tri.z}) EXPECT_LT(v, 4) << "quad triangle " << t;
    const Vec3 n = areaVector(mesh, tri);
    EXPECT_GT(n.z, 0.0f) << "quad triangle " << t << " keeps the counter-clockwise winding";
    quadArea += n.z;
  }
  EXPECT_NEAR(quadArea, 1.0, 1e-6);
  for (int t = 2; t < 4; ++t) {
    EXPECT_EQ(mesh.triangles[size_t(t)].x, 4);
    EXPECT_EQ(mesh.triangles[size_t(t)].y, 5);
    EXPECT_EQ(mesh.triangles[size_t(t)].z, 6);
  }
}

TEST_F(ObjLoader, QuadIsCutAlongItsShorterDiagonal) {
  // Diagonal 1–3 (0-based) is shorter than 0–2.
  const MeshData mesh = loadObjMesh(write("kite.obj",
                                          "v 0 0 0\nv 2 -0.5 0\nv 4 0 0\nv 2 0.5 0\n"
                                          "f 1 2 3 4\n"));
  ASSERT_EQ(mesh.triangles.size(), 2u);
  for (const Int3& t : mesh.triangles) {
    const bool hasDiagonal =
        (t.x == 1 || t.y == 1 || t.z == 1) && (t.x == 3 || t.y == 3 || t.z == 3);
    EXPECT_TRUE(hasDiagonal);
    EXPECT_GT(areaVector(mesh, t).z, 0.0f);
  }
}

TEST_F(ObjLoader, NonConvexPolygonIsEarClippedWithItsWindingAndArea) {
  // An L-shaped hexagon (area 3) in the y = 0 plane, counter-clockwise seen from −y, listed from
  // a corner next to the notch: a fan from vertex 1 would produce a flipped triangle.
  const MeshData mesh = loadObjMesh(write("ell.obj", R"(v 2 0 1
v 1 0 1
v 1 0 2
v 0 0 2
v 0 0 0
v 2 0 0
f 1 2 3 4 5 6
)"));
  ASSERT_EQ(mesh.triangles.size(), 4u);
  double area = 0.0;
  for (const Int3& t : mesh.triangles) {
    const Vec3 n = areaVector(mesh, t);
    EXPECT_LT(n.y, 0.0f) << "every triangle keeps the polygon's orientation";
    area += -n.y;
  }
  EXPECT_NEAR(area, 3.0, 1e-6);
}

TEST_F(ObjLoader, MissingFileNamesThePath) {
  const std::string path = (dir_ / "nope.obj").string();
  EXPECT_THAT(errorOf(path), AllOf(HasSubstr(path), HasSubstr("does not exist")));
  EXPECT_THAT(errorOf(dir_.string()), AllOf(HasSubstr(dir_.string()), HasSubstr("directory")));
}

TEST_F(ObjLoader, GarbageFileNamesThePath) {
  const std::string path = write("garbage.obj", std::string("\x7f"
                                                            "ELF\x01\x02\x00\xff junk\n",
                                                            14) +
                                                    "this is not an obj file\n");
  EXPECT_THAT(errorOf(path), HasSubstr(path));
  const std::string zeroIndex = write("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
  EXPECT_THAT(errorOf(zeroIndex), AllOf(HasSubstr(zeroIndex), HasSubstr("could not be parsed")));
}

TEST_F(ObjLoader, OutOfRangeFaceIndexNamesTheFace) {
  const std::string path = write("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n");
  EXPECT_THAT(errorOf(path), AllOf(HasSubstr(path), HasSubstr("face 2"), HasSubstr("vertex 9"),
                                   HasSubstr("3 vertices")));
  const std::string relative = write("relative.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -7\n");
  EXPECT_THAT(errorOf(relative), AllOf(HasSubstr(relative), HasSubstr("face 1")));
  // In a large polygon too (tinyobjloader's own triangulation would read out of bounds here).
  const std::string polygon =
      write("polygon.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4 40\n");
  EXPECT_THAT(errorOf(polygon), AllOf(HasSubstr(polygon), HasSubstr("vertex 40")));
}

TEST_F(ObjLoader, NonFiniteOrMalformedCoordinateNamesTheLine) {
  const std::string nan = write("nan.obj", "v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(errorOf(nan), AllOf(HasSubstr(nan), HasSubstr("line 2"), HasSubstr("'nan'")));
  const std::string inf = write("inf.obj", "v 0 0 0\nv 1 0 -inf\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(errorOf(inf), AllOf(HasSubstr(inf), HasSubstr("line 2")));
  const std::string huge = write("huge.obj", "v 0 0 0\nv 1 0 1e39\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(errorOf(huge), AllOf(HasSubstr(huge), HasSubstr("1e39")));
  const std::string word = write("word.obj", "v 0 0 0\n  v 1 abc 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(errorOf(word),
              AllOf(HasSubstr(word), HasSubstr("line 2"), HasSubstr("not a number")));
  const std::string shortLine = write("short.obj", "v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(errorOf(shortLine), AllOf(HasSubstr(shortLine), HasSubstr("line 1")));
  // Signs, exponents, CRLF line ends and a vertex color are fine.
  const MeshData mesh =
      loadObjMesh(write("ok.obj", "v +1.5 -2e-1 0 1 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n"));
  EXPECT_EQ(mesh.vertices[0], (Vec3{1.5f, -0.2f, 0.0f}));
}

TEST_F(ObjLoader, FileWithoutFacesNamesThePath) {
  const std::string path = write("points.obj", "# only vertices\nv 0 0 0\nv 1 0 0\nl 1 2\n");
  EXPECT_THAT(errorOf(path), AllOf(HasSubstr(path), HasSubstr("no faces")));
  const std::string empty = write("empty.obj", "");
  EXPECT_THAT(errorOf(empty), AllOf(HasSubstr(empty), HasSubstr("no faces")));
}

}  // namespace
}  // namespace weft
