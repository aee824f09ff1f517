// ClothBuilder (solver/cloth_builder.h): grid and mesh construction as the reference builds them
// (counts, layout, placement, masses, fix flags, rest areas and angles, edge rows), degenerate
// triangles dropped with a warning, and every validation error naming its item.
#include "solver/cloth_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "kernels/runtime/errors.h"
#include "solver/adjacency.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the weft::Error that f throws, or a marker when it throws none.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no weft::Error thrown)";
}

void expectNear(const Vec3& a, const Vec3& b, float tolerance) {
  EXPECT_NEAR(a.x, b.x, tolerance);
  EXPECT_NEAR(a.y, b.y, tolerance);
  EXPECT_NEAR(a.z, b.z, tolerance);
}

Quat randomRotation(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  Vec3 axis{normal(rng), normal(rng), normal(rng)};
  axis = normalizeOrZero(axis);
  if (axis == Vec3{}) axis = {0, 0, 1};
  std::uniform_real_distribution<float> angle(-3.1f, 3.1f);
  return quatFromAxisAngle(axis, angle(rng));
}

// Two triangles (0, 1, 2) and (1, 0, 3) hinged on the x axis; the second flap is lifted by
// `fold` radians towards +z, the side the first triangle's normal points to.
ClothMeshParams foldedPair(float fold) {
  ClothMeshParams mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {0.5f, 1, 0}, {0.5f, -std::cos(fold), std::sin(fold)}};
  mesh.triangles = {{0, 1, 2}, {1, 0, 3}};
  return mesh;
}

// A closed fan of `n` triangles around vertex 0: vertex 0 touches n triangles, n spokes and n
// rim edges (as their opposite vertex), 3n elements in all.
ClothMeshParams fan(int n) {
  ClothMeshParams mesh;
  mesh.vertices.push_back({0, 0, 0});
  for (int k = 0; k < n; ++k) {
    const float a = 2.0f * std::numbers::pi_v<float> * float(k) / float(n);
    mesh.vertices.push_back({std::cos(a), std::sin(a), 0});
  }
  for (int k = 0; k < n; ++k) mesh.triangles.push_back({0, 1 + k, 1 + (k + 1) % n});
  return mesh;
}

TEST(ClothBuilder, GridCountsMatchTheReferenceFormulas) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 50);
  std::vector<std::pair<int, int>> dims{{1, 1}, {1, 5}, {4, 1}, {3, 2}};
  dims.push_back({dim(rng), dim(rng)});
  for (const auto& [dimX, dimY] : dims) {
    SCOPED_TRACE(std::to_string(dimX) + " x " + std::to_string(dimY));
    ClothGridParams grid;
    grid.dimX = dimX;
    grid.dimY = dimY;
    ClothBuilder builder;
    EXPECT_EQ(builder.addClothGrid(grid), 0);
    const ModelDesc model = builder.finalize();
    const int rows = dimY + 1, columns = dimX + 1;
    EXPECT_EQ(model.numParticles(), rows * columns);
    EXPECT_EQ(builder.numParticles(), rows * columns);
    EXPECT_EQ(model.numTriangles(), 2 * dimX * dimY);
    EXPECT_EQ(model.numEdges(),
              rows * (columns - 1) + columns * (rows - 1) + (rows - 1) * (columns - 1));
    EXPECT_EQ(model.triangleRestInverse.size(), model.triangles.size());
    EXPECT_EQ(model.triangleRestAreas.size(), model.triangles.size());
    EXPECT_EQ(model.triangleMaterials.size(), model.triangles.size());
    EXPECT_EQ(model.edgeRestAngles.size(), model.edges.size());
    EXPECT_EQ(model.edgeRestLengths.size(), model.edges.size());
    EXPECT_EQ(model.edgeMaterials.size(), model.edges.size());
    EXPECT_EQ(model.coloring.colorOfParticle.size(), size_t(model.numParticles()));
    EXPECT_EQ(model.adjacency.triangleOffsets.size(), size_t(model.numParticles()) + 1);
    EXPECT_TRUE(builder.warnings().empty());
  }
}

TEST(ClothBuilder, GridLayoutPlacementAndTriangleOrder) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  ClothGridParams grid;
  grid.dimX = 3;
  grid.dimY = 2;
  grid.cellX = 0.25f;
  grid.cellY = 0.5f;
  grid.position = {1.0f, -2.0f, 3.0f};
  grid.rotation = randomRotation(rng);
  grid.velocity = {0.5f, 0.0f, -1.0f};
  grid.particleRadius = 0.02f;
  ClothBuilder builder;
  builder.addClothGrid(grid);
  const ModelDesc model = builder.finalize();
  for (int y = 0; y <= grid.dimY; ++y)
    for (int x = 0; x <= grid.dimX; ++x) {
      const size_t v = size_t(y * (grid.dimX + 1) + x);
      const Vec3 local{float(x) * grid.cellX, float(y) * grid.cellY, 0.0f};
      expectNear(model.positions[v], grid.position + rotate(grid.rotation, local), 1e-5f);
      EXPECT_EQ(model.velocities[v], grid.velocity);
      EXPECT_EQ(model.radii[v], grid.particleRadius);
    }
  // Cell (x, y): (v0, v1, v3), (v1, v2, v3) with v0 = (x−1, y−1), v1 = (x, y−1), v2 = (x, y),
  // v3 = (x−1, y); cells in row-major order.
  size_t t = 0;
  for (int y = 1; y <= grid.dimY; ++y)
    for (int x = 1; x <= grid.dimX; ++x, t += 2) {
      const int v0 = (y - 1) * 4 + x - 1, v1 = (y - 1) * 4 + x, v2 = y * 4 + x, v3 = y * 4 + x - 1;
      EXPECT_EQ(model.triangles[t].x, v0);
      EXPECT_EQ(model.triangles[t].y, v1);
      EXPECT_EQ(model.triangles[t].z, v3);
      EXPECT_EQ(model.triangles[t + 1].x, v1);
      EXPECT_EQ(model.triangles[t + 1].y, v2);
      EXPECT_EQ(model.triangles[t + 1].z, v3);
    }
}

TEST(ClothBuilder, GridMassesAreOverwrittenAndFixFlagsZeroTheirRowsAndColumns) {
  for (int flags = 0; flags < 16; ++flags) {
    SCOPED_TRACE("fix flags " + std::to_string(flags));
    ClothGridParams grid;
    grid.dimX = 4;
    grid.dimY = 3;
    grid.mass = 0.37f;
    grid.fixLeft = flags & 1;
    grid.fixRight = flags & 2;
    grid.fixBottom = flags & 4;
    grid.fixTop = flags & 8;
    ClothBuilder builder;
    builder.addClothGrid(grid);
    const ModelDesc model = builder.finalize();
    for (int y = 0; y <= grid.dimY; ++y)
      for (int x = 0; x <= grid.dimX; ++x) {
        const bool fixed = (grid.fixLeft && x == 0) || (grid.fixRight && x == grid.dimX) ||
                           (grid.fixBottom && y == 0) || (grid.fixTop && y == grid.dimY);
        EXPECT_EQ(model.masses[size_t(y * 5 + x)], fixed ? 0.0f : grid.mass)
            << "vertex (" << x << ", " << y << ")";
      }
  }
}

TEST(ClothBuilder, GridRestAreasSumToThePlaneAreaAndFlatAnglesAreZero) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  ClothGridParams grid;
  grid.dimX = 13;
  grid.dimY = 7;
  grid.cellX = 0.03f;
  grid.cellY = 0.11f;
  grid.rotation = randomRotation(rng);
  ClothBuilder builder;
  builder.addClothGrid(grid);
  const ModelDesc model = builder.finalize();
  double area = 0.0;
  for (float a : model.triangleRestAreas) {
    EXPECT_NEAR(a, 0.5 * 0.03 * 0.11, 1e-7);
    area += a;
  }
  EXPECT_NEAR(area, 13 * 0.03 * 7 * 0.11, 1e-5);
  const float diagonal = std::sqrt(0.03f * 0.03f + 0.11f * 0.11f);
  for (size_t e = 0; e < model.edges.size(); ++e) {
    EXPECT_NEAR(model.edgeRestAngles[e], 0.0f, 1e-4f) << "edge " << e;
    const float l = model.edgeRestLengths[e];
    EXPECT_TRUE(std::fabs(l - 0.03f) < 1e-5f || std::fabs(l - 0.11f) < 1e-5f ||
                std::fabs(l - diagonal) < 1e-5f)
        << "edge " << e << " length " << l;
  }
}

TEST(ClothBuilder, EdgeRowsFollowFirstAppearanceWithWindingAndOpposites) {
  // 1 x 1 grid: vertices 0 = (0, 0), 1 = (1, 0), 2 = (0, 1), 3 = (1, 1); triangles (0, 1, 2),
  // (1, 3, 2). Rows come from 0→1, 1→2, 2→0 of the first, then 1→3, 3→2 of the second, whose
  // 2→1 supplies o1 = 3 to the row of edge 1–2.
  ClothGridParams grid;
  grid.dimX = grid.dimY = 1;
  grid.cellX = 2.0f;
  grid.cellY = 1.0f;
  ClothBuilder builder;
  builder.addClothGrid(grid);
  const ModelDesc model = builder.finalize();
  const std::vector<Int4> expected{
      {2, -1, 0, 1}, {0, 3, 1, 2}, {1, -1, 2, 0}, {2, -1, 1, 3}, {1, -1, 3, 2}};
  ASSERT_EQ(model.edges.size(), expected.size());
  for (size_t e = 0; e < expected.size(); ++e) {
    SCOPED_TRACE("edge " + std::to_string(e));
    EXPECT_EQ(model.edges[e].x, expected[e].x);
    EXPECT_EQ(model.edges[e].y, expected[e].y);
    EXPECT_EQ(model.edges[e].z, expected[e].z);
    EXPECT_EQ(model.edges[e].w, expected[e].w);
  }
  const std::vector<float> lengths{2.0f, std::sqrt(5.0f), 1.0f, 1.0f, 2.0f};
  for (size_t e = 0; e < lengths.size(); ++e)
    EXPECT_NEAR(model.edgeRestLengths[e], lengths[e], 1e-6f) << "edge " << e;
}

TEST(ClothBuilder, SecondClothIsOffsetAndItsEdgesFollowTheFirst) {
  ClothBuilder builder;
  ClothGridParams grid;
  grid.dimX = grid.dimY = 1;
  grid.edgeMaterial = {7.0f, 0.5f};
  EXPECT_EQ(builder.addClothGrid(grid), 0);
  ClothMeshParams mesh = foldedPair(0.0f);
  mesh.edgeMaterial = {3.0f, 0.0f};
  mesh.triangleMaterial = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(builder.addClothMesh(mesh), 4);
  EXPECT_EQ(builder.numParticles(), 8);
  EXPECT_EQ(builder.numTriangles(), 4);
  const ModelDesc model = builder.finalize();
  ASSERT_EQ(model.numEdges(), 5 + 5);
  EXPECT_EQ(model.triangles[2].x, 4);
  EXPECT_EQ(model.triangles[3].z, 7);
  // First row of the mesh: triangle (4, 5, 6), edge 4→5, opposite 6, second triangle gives 7.
  EXPECT_EQ(model.edges[5].x, 6);
  EXPECT_EQ(model.edges[5].y, 7);
  EXPECT_EQ(model.edges[5].z, 4);
  EXPECT_EQ(model.edges[5].w, 5);
  for (int e = 0; e < 10; ++e)
    EXPECT_EQ(model.edgeMaterials[size_t(e)].ke, e < 5 ? 7.0f : 3.0f) << "edge " << e;
  EXPECT_EQ(model.triangleMaterials[3].kd, 3.0f);
  EXPECT_EQ(model.triangleMaterials[0].kd, TriangleMaterial{}.kd);
}

TEST(ClothBuilder, FoldedMeshRestAngleMatchesTheFold) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> randomFold(-3.0f, 3.0f);
  for (float fold : {0.0f, 0.3f, -0.7f, 1.2f, 2.5f, -2.9f, randomFold(rng)}) {
    SCOPED_TRACE("fold " + std::to_string(fold));
    ClothMeshParams mesh = foldedPair(fold);
    mesh.rotation = randomRotation(rng);  // placement must not change the rest angle
    mesh.scale = 0.3f;
    ClothBuilder builder;
    builder.addClothMesh(mesh);
    const ModelDesc model = builder.finalize();
    ASSERT_EQ(model.numEdges(), 5);
    EXPECT_EQ(model.edges[0].x, 2);
    EXPECT_EQ(model.edges[0].y, 3);
    // dihedralAngle's convention: lifting the o1 flap towards n̂1 gives a negative angle.
    EXPECT_NEAR(model.edgeRestAngles[0], -fold, 2e-4f);
    for (size_t e = 1; e < model.edges.size(); ++e) {
      EXPECT_EQ(model.edges[e].y, -1) << "edge " << e;
      EXPECT_EQ(model.edgeRestAngles[e], 0.0f) << "boundary edge " << e;
    }
    EXPECT_NEAR(model.edgeRestLengths[0], 0.3f, 1e-6f);
  }
}

TEST(ClothBuilder, MeshPlacementAndLumpedMassSumToDensityTimesArea) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> jitter(-0.3f, 0.3f);
  ClothMeshParams mesh;
  const int n = 9;
  for (int y = 0; y <= n; ++y)
    for (int x = 0; x <= n; ++x)
      mesh.vertices.push_back({float(x) + jitter(rng), float(y) + jitter(rng), jitter(rng)});
  for (int y = 1; y <= n; ++y)
    for (int x = 1; x <= n; ++x) {
      const int v0 = (y - 1) * (n + 1) + x - 1, v1 = v0 + 1, v2 = y * (n + 1) + x, v3 = v2 - 1;
      mesh.triangles.push_back({v0, v1, v3});
      mesh.triangles.push_back({v1, v2, v3});
    }
  mesh.position = {0.1f, 0.2f, 0.3f};
  mesh.rotation = randomRotation(rng);
  mesh.scale = 0.5f;
  mesh.velocity = {1.0f, 2.0f, 3.0f};
  mesh.density = 0.25f;
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  const ModelDesc model = builder.finalize();
  ASSERT_EQ(model.numParticles(), int(mesh.vertices.size()));
  ASSERT_EQ(model.numTriangles(), int(mesh.triangles.size()));
  for (size_t v = 0; v < mesh.vertices.size(); ++v) {
    expectNear(model.positions[v],
               mesh.position + rotate(mesh.rotation, mesh.scale * mesh.vertices[v]), 1e-5f);
    EXPECT_EQ(model.velocities[v], mesh.velocity);
  }
  // Independent areas from the scaled input (rotation and translation preserve area).
  double totalArea = 0.0, totalMass = 0.0;
  std::vector<double> expectedMass(mesh.vertices.size(), 0.0);
  for (size_t t = 0; t < mesh.triangles.size(); ++t) {
    const Int3& tri = mesh.triangles[t];
    const Vec3 a = mesh.vertices[size_t(tri.x)], b = mesh.vertices[size_t(tri.y)],
               c = mesh.vertices[size_t(tri.z)];
    const double area = 0.5 * length(cross(b - a, c - a)) * mesh.scale * mesh.scale;
    EXPECT_NEAR(model.triangleRestAreas[t], area, 1e-5 * area + 1e-7) << "triangle " << t;
    totalArea += area;
    for (int v : {tri.x, tri.y, tri.z}) expectedMass[size_t(v)] += mesh.density * area / 3.0;
  }
  for (size_t v = 0; v < mesh.vertices.size(); ++v) {
    EXPECT_NEAR(model.masses[v], expectedMass[v], 1e-5 * expectedMass[v]) << "vertex " << v;
    totalMass += model.masses[v];
  }
  EXPECT_NEAR(totalMass, mesh.density * totalArea, 1e-5 * totalMass);
}

TEST(ClothBuilder, RestInverseMapsRestEdgesToTheUnitBasis) {
  // Dm⁻¹ · Dm = I, with Dm's columns the 2-D rest edges of lengths |q − p| along e1.
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> coordinate(-1.0f, 1.0f);
  ClothMeshParams mesh;
  mesh.vertices = {{coordinate(rng), coordinate(rng), coordinate(rng)},
                   {2.0f + coordinate(rng), coordinate(rng), coordinate(rng)},
                   {coordinate(rng), 2.0f + coordinate(rng), coordinate(rng)}};
  mesh.triangles = {{0, 1, 2}};
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  const ModelDesc model = builder.finalize();
  ASSERT_EQ(model.numTriangles(), 1);
  const Vec3 p = model.positions[0], q = model.positions[1], r = model.positions[2];
  const Mat22& inv = model.triangleRestInverse[0];
  // Dm = [[|qp|, e1·rp], [0, |e2·rp|]]: det(Dm) = 2·area and Dm⁻¹ has det 1/(2·area).
  const float area = 0.5f * length(cross(q - p, r - p));
  EXPECT_NEAR(model.triangleRestAreas[0], area, 1e-5f);
  EXPECT_NEAR(inv.m00 * inv.m11 - inv.m01 * inv.m10, 1.0f / (2.0f * area), 1e-4f);
  EXPECT_NEAR(inv.m00, 1.0f / length(q - p), 1e-5f);
  EXPECT_NEAR(inv.m10, 0.0f, 1e-6f);
}

TEST(ClothBuilder, DegenerateTrianglesAreDroppedWithAWarning) {
  ClothMeshParams mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {2, 0, 0}, {1, 0, 0}};
  // Triangle 1 is collinear, triangle 2 has two corners at the same position.
  mesh.triangles = {{0, 1, 2}, {0, 1, 3}, {1, 4, 2}, {1, 3, 2}};
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  EXPECT_EQ(builder.numTriangles(), 2);
  ASSERT_EQ(builder.warnings().size(), 1u);
  EXPECT_THAT(builder.warnings()[0], AllOf(HasSubstr("cloth mesh 0"),
                                           HasSubstr("dropped 2 degenerate"), HasSubstr("(1, 2)")));
  const ModelDesc model = builder.finalize();
  EXPECT_EQ(model.numTriangles(), 2);
  EXPECT_EQ(model.triangles[1].x, 1);
  EXPECT_EQ(model.triangles[1].y, 3);
  EXPECT_EQ(model.masses[4], 0.0f);  // vertex 4 is in no kept triangle
}

TEST(ClothBuilder, FinalizeColorsWithTheGivenOptions) {
  ClothBuilder builder;
  ClothGridParams grid;
  grid.dimX = grid.dimY = 1;
  builder.addClothGrid(grid);
  EXPECT_EQ(builder.finalize().coloring.numColors(), 4);  // bending on by default
  ColoringOptions options;
  options.includeBending = false;
  const ModelDesc model = builder.finalize(options);
  EXPECT_EQ(model.coloring.numColors(), 3);
  EXPECT_EQ(findColoringConflict(model.coloring, model.triangles, model.edges, false), "");
}

TEST(ClothBuilder, FixedParticlesCanBeDriven) {
  ClothBuilder builder;
  ClothGridParams grid;
  grid.dimX = 2;
  grid.dimY = 2;
  grid.fixLeft = true;
  builder.addClothGrid(grid);
  builder.fixParticle(8);
  DriverDesc driver;
  driver.particles = {0, 3, 6, 8};
  builder.addDriver(driver);
  ShapeDesc ground;
  ground.name = "ground";
  builder.addShape(ground);
  const ModelDesc model = builder.finalize();
  EXPECT_EQ(model.masses[8], 0.0f);
  ASSERT_EQ(model.drivers.size(), 1u);
  EXPECT_EQ(model.drivers[0].particles, driver.particles);
  ASSERT_EQ(model.shapes.size(), 1u);
  EXPECT_EQ(model.shapes[0].name, "ground");
}

TEST(ClothBuilder, VertexTouchingTooManyElementsIsRejected) {
  {
    ClothBuilder builder;
    builder.addClothMesh(fan(85));  // 255 elements at the center
    const ModelDesc model = builder.finalize();
    EXPECT_EQ(adjacentElementCount(model.adjacency, 0), 255);
  }
  ClothBuilder builder;
  builder.addClothMesh(fan(86));  // 258
  EXPECT_THAT(errorOf([&] { builder.finalize(); }),
              AllOf(HasSubstr("particle 0"), HasSubstr("258"), HasSubstr("256")));
}

TEST(ClothBuilder, NonManifoldEdgeIsAnErrorNamingTheEdge) {
  ClothMeshParams mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {0.5f, 1, 0}, {0.5f, -1, 0}, {0.5f, 0, 1}};
  mesh.triangles = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}};
  ClothBuilder builder;
  ClothGridParams grid;
  grid.dimX = grid.dimY = 1;
  builder.addClothGrid(grid);
  builder.addClothMesh(mesh);
  EXPECT_THAT(errorOf([&] { builder.finalize(); }),
              AllOf(HasSubstr("cloth mesh 0"), HasSubstr("vertices 0 and 1"),
                    HasSubstr("particles 4, 5"), HasSubstr("three or more triangles")));
}

TEST(ClothBuilder, RepeatedTriangleIsAnErrorNamingBoth) {
  ClothMeshParams mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {0.5f, 1, 0}, {0.5f, -1, 0}};
  // The same corners in another order: the membrane would count twice and hinge on itself.
  mesh.triangles = {{0, 1, 2}, {1, 0, 3}, {2, 0, 1}};
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  EXPECT_THAT(errorOf([&] { builder.finalize(); }),
              AllOf(HasSubstr("cloth mesh 0"), HasSubstr("triangle 2"),
                    HasSubstr("same three vertices as triangle 0")));
}

// ---- Validation: each error names its item ------------------------------------------------

ClothGridParams smallGrid() {
  ClothGridParams grid;
  grid.dimX = 2;
  grid.dimY = 2;
  return grid;
}

std::string gridError(ClothGridParams grid) {
  ClothBuilder builder;
  builder.addClothGrid(smallGrid());
  builder.addClothGrid(grid);  // the second grid is the bad one: "cloth grid 1"
  return errorOf([&] { builder.finalize(); });
}

std::string meshError(ClothMeshParams mesh) {
  ClothBuilder builder;
  builder.addClothMesh(mesh);
  return errorOf([&] { builder.finalize(); });
}

TEST(ClothBuilderValidation, GridParameters) {
  const float nan = std::nanf("");
  ClothGridParams p = smallGrid();
  p.dimX = 0;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("dimX = 0")));
  p = smallGrid();
  p.dimY = -3;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("dimY = -3")));
  p = smallGrid();
  p.dimX = p.dimY = 10000;  // 10^8 vertices: refused before anything is allocated
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("100020001 more vertices")));
  p = smallGrid();
  p.cellX = -0.1f;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("cellX")));
  p = smallGrid();
  p.cellY = nan;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("cellY")));
  p = smallGrid();
  p.mass = -1.0f;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("mass is -1")));
  p = smallGrid();
  p.mass = nan;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("mass")));
  p = smallGrid();
  p.position = {0, nan, 0};
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("position")));
  p = smallGrid();
  p.velocity = {std::numeric_limits<float>::infinity(), 0, 0};
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("velocity")));
  p = smallGrid();
  p.rotation = {0, 0, 0, 2};
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("unit quaternion")));
  p = smallGrid();
  p.particleRadius = -0.01f;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("particleRadius")));
  p = smallGrid();
  p.triangleMaterial.ka = -5.0f;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("triangleMaterial.ka")));
  p = smallGrid();
  p.triangleMaterial.kd = nan;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("triangleMaterial.kd")));
  p = smallGrid();
  p.edgeMaterial.ke = -1.0f;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("edgeMaterial.ke")));
  p = smallGrid();
  p.edgeMaterial.kd = nan;
  EXPECT_THAT(gridError(p), AllOf(HasSubstr("cloth grid 1"), HasSubstr("edgeMaterial.kd")));
  EXPECT_EQ(gridError(smallGrid()), "(no weft::Error thrown)");
}

TEST(ClothBuilderValidation, MeshParametersAndIndices) {
  const float nan = std::nanf("");
  const ClothMeshParams good = foldedPair(0.5f);
  EXPECT_EQ(meshError(good), "(no weft::Error thrown)");
  ClothMeshParams p = good;
  for (Vec3& v : p.vertices) v = {1.0f, 2.0f, 3.0f};  // every triangle of zero area
  EXPECT_THAT(meshError(p),
              AllOf(HasSubstr("of its triangles have zero area"), HasSubstr("no cloth is left")));
  p = good;
  p.density = -0.1f;
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("cloth mesh 0"), HasSubstr("density")));
  p = good;
  p.scale = 0.0f;
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("cloth mesh 0"), HasSubstr("scale")));
  p = good;
  p.scale = nan;
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("cloth mesh 0"), HasSubstr("scale")));
  p = good;
  p.vertices[3].z = nan;
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("particle 3"), HasSubstr("cloth mesh 0"),
                                  HasSubstr("non-finite position")));
  for (Vec3& v : p.vertices) v.y = nan;  // every triangle degenerate, but named by its vertices
  EXPECT_THAT(meshError(p),
              AllOf(HasSubstr("non-finite position"), ::testing::Not(HasSubstr("zero area"))));
  p = good;
  p.triangles[1] = {1, 0, 7};
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("cloth mesh 0"), HasSubstr("triangle 1"),
                                  HasSubstr("vertex 7"), HasSubstr("4 vertices")));
  p = good;
  p.triangles[0] = {0, -1, 2};
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("triangle 0"), HasSubstr("vertex -1")));
  p = good;
  p.triangles[1] = {1, 3, 1};
  EXPECT_THAT(meshError(p),
              AllOf(HasSubstr("cloth mesh 0"), HasSubstr("triangle 1"), HasSubstr("repeats")));
  p = good;
  p.rotation = {0.5f, 0.5f, 0.5f, 0.0f};
  EXPECT_THAT(meshError(p), AllOf(HasSubstr("cloth mesh 0"), HasSubstr("rotation")));
  p = good;
  p.triangleMaterial.ke = -2.0f;
  EXPECT_THAT(meshError(p), HasSubstr("triangleMaterial.ke"));
}

TEST(ClothBuilderValidation, EmptyModelAndUnknownParticles) {
  ClothBuilder builder;
  EXPECT_THAT(errorOf([&] { builder.finalize(); }), HasSubstr("no particles"));
  EXPECT_THAT(errorOf([&] { builder.fixParticle(0); }), HasSubstr("fixParticle(0)"));
  builder.addClothMesh(ClothMeshParams{});  // no vertices: still empty
  EXPECT_THAT(errorOf([&] { builder.finalize(); }), HasSubstr("no particles"));
}

TEST(ClothBuilderValidation, Drivers) {
  const auto driverError = [](DriverDesc driver, bool fixFirst) {
    ClothBuilder builder;
    builder.addClothGrid(smallGrid());
    if (fixFirst) builder.fixParticle(0);
    builder.addDriver(DriverDesc{});  // driver 0: no particles, valid
    builder.addDriver(driver);        // driver 1
    return errorOf([&] { builder.finalize(); });
  };
  DriverDesc driver;
  driver.particles = {0};
  EXPECT_EQ(driverError(driver, true), "(no weft::Error thrown)");
  EXPECT_THAT(driverError(driver, false),
              AllOf(HasSubstr("driver 1"), HasSubstr("particle 0"), HasSubstr("mass")));
  driver.particles = {0, 99};
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("particle 99")));
  driver.particles = {0, -1};
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("particle -1")));
  driver.particles = {0, 0};
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("twice")));
  {
    ClothBuilder builder;
    builder.addClothGrid(smallGrid());
    builder.fixParticle(2);
    DriverDesc driverOfTwo;
    driverOfTwo.particles = {2};
    builder.addDriver(driverOfTwo);
    builder.addDriver(driverOfTwo);
    EXPECT_THAT(errorOf([&] { builder.finalize(); }),
                AllOf(HasSubstr("particle 2"), HasSubstr("driven by both driver 0 and driver 1")));
  }
  driver.particles = {0};
  driver.driver.axisDirection = {0, 0, 3};
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("unit")));
  driver.driver.axisDirection = {0, 0, 1};
  driver.driver.angularSpeed = std::nanf("");
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("non-finite")));
  driver.driver.angularSpeed = 1.0f;
  driver.driver.startTime = 2.0f;
  driver.driver.stopTime = 1.0f;
  EXPECT_THAT(driverError(driver, true), AllOf(HasSubstr("driver 1"), HasSubstr("start")));
}

TEST(ClothBuilderValidation, Shapes) {
  const auto shapeError = [](ShapeDesc shape) {
    ClothBuilder builder;
    builder.addClothGrid(smallGrid());
    ShapeDesc ground;
    ground.name = "ground";
    builder.addShape(ground);
    shape.name = "ball";
    builder.addShape(shape);
    return errorOf([&] { builder.finalize(); });
  };
  const float nan = std::nanf("");
  ShapeDesc shape;
  shape.geometry.type = ShapeType::Sphere;
  shape.geometry.radius = 0.5f;
  EXPECT_EQ(shapeError(shape), "(no weft::Error thrown)");
  ShapeDesc bad = shape;
  bad.geometry.radius = -0.5f;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1 ('ball')"), HasSubstr("radius")));
  bad.geometry.radius = 0.0f;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("positive radius")));
  // The geometry rule is the cable builder's too (solver/shape_checks.h): only the fields of the
  // shape's type are read.
  bad = shape;
  bad.geometry.halfExtents = {1, nan, 1};
  EXPECT_EQ(shapeError(bad), "(no weft::Error thrown)") << "a sphere has no half extents";
  bad.geometry.type = ShapeType::Box;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("half extents")));
  bad = shape;
  bad.geometry.type = ShapeType::Capsule;
  bad.geometry.halfHeight = -1.0f;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("half height")));
  bad = shape;
  bad.margin = nan;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("margin")));
  bad = shape;
  bad.material.mu = -0.1f;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("contact material")));
  bad = shape;
  bad.material.ke = nan;
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("contact material")));
  bad = shape;
  bad.motion.pose0.p = {nan, 0, 0};
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("pose")));
  bad = shape;
  bad.motion.pose0.q = {0, 0, 0, 0};
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("pose")));
  bad = shape;
  bad.motion.angularVelocity = {0, nan, 0};
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("velocity")));
  bad = shape;
  bad.geometry.type = static_cast<ShapeType>(17);
  EXPECT_THAT(shapeError(bad), AllOf(HasSubstr("shape 1"), HasSubstr("unknown shape type 17")));
}

}  // namespace
}  // namespace weft
