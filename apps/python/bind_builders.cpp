// weft._weft: building models. ClothBuilder and CableBuilder as in C++ (solver/cloth_builder.h,
// solver/cable_builder.h) with NumPy arrays for vertices, triangles, rod points and graph edges;
// finalize() returns a ClothModel or RigidModel (the ModelDesc / RigidDesc), which a Simulation
// takes and whose arrays read back as NumPy copies.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>

#include "apps/python/bindings.h"
#include "kernels/runtime/errors.h"
#include "scenes/obj_loader.h"
#include "solver/cable_builder.h"
#include "solver/cloth_builder.h"

namespace weft::python {
namespace {

nb::dict rodIds(const RodIds& ids) {
  nb::dict d;
  d["bodies"] = ids.bodies;
  d["shapes"] = ids.shapes;
  d["joints"] = ids.joints;
  return d;
}

std::vector<Quat> optionalQuaternions(const std::optional<FloatRows>& quaternions) {
  return quaternions ? rowsOf<Quat>(*quaternions, "quaternions") : std::vector<Quat>{};
}

/// The models of a list, all of one kind (ClothModel or RigidModel), for combine_worlds.
template <class Desc>
std::vector<const Desc*> modelsOf(const nb::list& models) {
  std::vector<const Desc*> out;
  for (nb::handle model : models) {
    if (!nb::isinstance<Desc>(model))
      throw nb::type_error(("combine_worlds: the models must be all ClothModel or all RigidModel; "
                            "got " +
                            nb::cast<std::string>(nb::repr(model.type())))
                               .c_str());
    out.push_back(nb::cast<const Desc*>(model));
  }
  return out;
}

/// Vertex or node indices (`what`) as int32 rows: integers only, each within int32 (NumPy's own
/// conversion would wrap 2**32 + 2 to 2 and truncate 2.7 to 2, building another model).
IntRows indexRows(nb::handle array, const char* what) {
  using namespace nb::literals;
  const nb::module_ np = nb::module_::import_("numpy");
  const nb::object a = np.attr("asarray")(array);
  if (nb::cast<int>(a.attr("ndim")) != 2)
    throw nb::value_error((std::string(what) + " must be a 2-D array (one row per element), not " +
                           std::to_string(nb::cast<int>(a.attr("ndim"))) + "-D")
                              .c_str());
  const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
  if (kind != "i" && kind != "u")
    throw nb::type_error((std::string(what) + " must hold integer indices, not " +
                          nb::cast<std::string>(a.attr("dtype").attr("name")) + " values")
                             .c_str());
  if (nb::cast<size_t>(a.attr("size")) > 0) {
    // As doubles: exact for every int32, and ordered right for any int64 or uint64.
    const double lo = nb::cast<double>(a.attr("min")()), hi = nb::cast<double>(a.attr("max")());
    if (lo < INT32_MIN || hi > INT32_MAX)
      throw nb::value_error((std::string(what) + " holds an index outside the 32-bit range (" +
                             std::to_string((long long)(lo < INT32_MIN ? lo : hi)) + ")")
                                .c_str());
  }
  return nb::cast<IntRows>(np.attr("ascontiguousarray")(a, "dtype"_a = "int32"));
}

}  // namespace

void bindBuilders(nb::module_& m) {
  nb::class_<ModelDesc>(m, "ClothModel",
                        "A finalized cloth (ClothBuilder.finalize()): particles, triangles, "
                        "bending edges, coloring, shapes, drivers, worlds.")
      .def_prop_ro("num_particles", &ModelDesc::numParticles)
      .def_prop_ro("num_triangles", &ModelDesc::numTriangles)
      .def_prop_ro("num_edges", &ModelDesc::numEdges)
      .def_prop_ro("num_colors", [](const ModelDesc& d) { return d.coloring.numColors(); })
      .def_prop_ro("num_worlds", [](const ModelDesc& d) { return d.worldRanges.count(); })
      .def_prop_ro(
          "positions", [](const ModelDesc& d) { return floatArray(d.positions); },
          "(n, 3) initial positions [m] (a copy)")
      .def_prop_ro(
          "velocities", [](const ModelDesc& d) { return floatArray(d.velocities); },
          "(n, 3) initial velocities [m/s] (a copy)")
      .def_prop_ro(
          "masses",
          [](const ModelDesc& d) { return floatArray(d.masses.data(), d.masses.size(), 1); },
          "(n, 1) masses [kg], 0 = held (a copy)")
      .def_prop_ro(
          "triangles", [](const ModelDesc& d) { return intArray(d.triangles); },
          "(m, 3) particle ids (a copy)")
      .def_prop_ro(
          "edges", [](const ModelDesc& d) { return intArray(d.edges); },
          "(e, 4) bending edges (o0, o1, v0, v1), o1 = -1 on a boundary (a copy)")
      .def_ro("shapes", &ModelDesc::shapes)
      .def_ro("drivers", &ModelDesc::drivers)
      .def_ro("warnings", &ModelDesc::warnings, "what the builder fixed without failing")
      .def("__repr__", [](const ModelDesc& d) {
        return "ClothModel(" + std::to_string(d.numParticles()) + " particles, " +
               std::to_string(d.numTriangles()) + " triangles, " +
               std::to_string(d.coloring.numColors()) + " colors, " +
               std::to_string(d.shapes.size()) + " shapes, " +
               std::to_string(d.worldRanges.count()) + " worlds)";
      });

  nb::class_<ClothBuilder>(m, "ClothBuilder",
                           "Assembles a cloth model from grids and meshes, fixed particles, "
                           "shapes and drivers; finalize() validates it and names what is wrong.")
      .def(nb::init<>())
      .def("add_cloth_grid", &ClothBuilder::addClothGrid, nb::arg("grid"),
           "Adds a grid cloth; returns the index of its first particle.")
      .def(
          "add_cloth_mesh",
          [](ClothBuilder& b, const FloatRows& vertices, nb::handle triangleIndices,
             const Vec3& position, const Quat& rotation, float scale, const Vec3& velocity,
             float density, const std::optional<TriangleMaterial>& triangleMaterial,
             const std::optional<EdgeMaterial>& edgeMaterial, float particleRadius) {
            ClothMeshParams p;
            p.vertices = rowsOf<Vec3>(vertices, "vertices");
            p.triangles = rowsOf<Int3>(indexRows(triangleIndices, "triangles"), "triangles");
            p.position = position;
            p.rotation = rotation;
            p.scale = scale;
            p.velocity = velocity;
            p.density = density;
            p.triangleMaterial = triangleMaterial.value_or(TriangleMaterial{});
            p.edgeMaterial = edgeMaterial.value_or(EdgeMaterial{});
            p.particleRadius = particleRadius;
            return b.addClothMesh(p);
          },
          nb::arg("vertices"), nb::arg("triangles"), nb::arg("position") = Vec3{},
          nb::arg("rotation") = Quat{}, nb::arg("scale") = 1.0f, nb::arg("velocity") = Vec3{},
          nb::arg("density") = 0.1f, nb::arg("triangle_material") = nb::none(),
          nb::arg("edge_material") = nb::none(), nb::arg("particle_radius") = 0.1f,
          "Adds a triangle-mesh cloth from (n, 3) vertices and (m, 3) vertex indices, placed as "
          "position + rotate(rotation, scale · v); masses are lumped from density [kg/m²]. "
          "Returns the index of its first particle.")
      .def("fix_particle", &ClothBuilder::fixParticle, nb::arg("particle"),
           "Mass 0: held in place or moved by a driver.")
      .def("add_shape", &ClothBuilder::addShape, nb::arg("shape"))
      .def("add_driver", &ClothBuilder::addDriver, nb::arg("driver"))
      .def_prop_ro("num_particles", &ClothBuilder::numParticles)
      .def_prop_ro("num_triangles", &ClothBuilder::numTriangles)
      .def_prop_ro("warnings", &ClothBuilder::warnings)
      .def(
          "finalize", [](const ClothBuilder& b) { return b.finalize(); },
          "Bending edges, adjacency and coloring; validates; returns a ClothModel.");

  nb::class_<RigidDesc>(m, "RigidModel",
                        "A finalized rigid (cable) model (CableBuilder.finalize()): bodies, "
                        "shapes, joints, body coloring.")
      .def_prop_ro("num_bodies", &RigidDesc::numBodies)
      .def_prop_ro("num_shapes", &RigidDesc::numShapes)
      .def_prop_ro("num_joints", &RigidDesc::numJoints)
      .def_prop_ro("num_colors",
                   [](const RigidDesc& d) { return int(d.bodyColorOffsets.size()) - 1; })
      .def_prop_ro(
          "poses",
          [](const RigidDesc& d) {
            std::vector<Transform> poses;
            for (const BodyDesc& b : d.bodies) poses.push_back(b.pose);
            return floatArray(poses);
          },
          "(n, 7) initial body origin poses (px, py, pz, qx, qy, qz, qw) (a copy)")
      .def_ro("bodies", &RigidDesc::bodies)
      .def_ro("shapes", &RigidDesc::shapes)
      .def_ro("joints", &RigidDesc::joints)
      .def("__repr__", [](const RigidDesc& d) {
        return "RigidModel(" + std::to_string(d.numBodies()) + " bodies, " +
               std::to_string(d.numShapes()) + " shapes, " + std::to_string(d.numJoints()) +
               " joints)";
      });

  nb::class_<CableBuilder>(m, "CableBuilder",
                           "Assembles a rigid model from rods (chains or graphs of capsules with "
                           "ROD joints), bodies, shapes and joints.")
      .def(nb::init<>())
      .def(
          "add_rod",
          [](CableBuilder& b, const FloatRows& points, const std::optional<RodParams>& params,
             const std::optional<FloatRows>& quaternions) {
            const std::vector<Vec3> p = rowsOf<Vec3>(points, "points");
            const std::vector<Quat> q = optionalQuaternions(quaternions);
            return rodIds(b.addRod(p, q, params.value_or(RodParams{})));
          },
          nb::arg("points"), nb::arg("params") = nb::none(), nb::arg("quaternions") = nb::none(),
          "A chain of len(points) − 1 capsules joined by ROD joints (frames by parallel "
          "transport unless (n − 1, 4) quaternions are given). Returns the ids it added: "
          "{'bodies', 'shapes', 'joints'}.")
      .def(
          "add_rod_graph",
          [](CableBuilder& b, const FloatRows& nodes, nb::handle edgeIndices,
             const std::optional<RodParams>& params, const std::optional<FloatRows>& quaternions) {
            const std::vector<Vec3> n = rowsOf<Vec3>(nodes, "nodes");
            const IntRows edges = indexRows(edgeIndices, "edges");
            std::vector<std::pair<int, int>> e(edges.shape(0));
            if (edges.shape(1) != 2) throw nb::value_error("edges must have shape (m, 2)");
            for (size_t i = 0; i < e.size(); ++i) e[i] = {edges(i, 0), edges(i, 1)};
            return rodIds(b.addRodGraph(n, e, optionalQuaternions(quaternions),
                                        params.value_or(RodParams{})));
          },
          nb::arg("nodes"), nb::arg("edges"), nb::arg("params") = nb::none(),
          nb::arg("quaternions") = nb::none(),
          "A graph of capsules, one per edge (u, v) of the (m, 2) edges, joined at shared nodes "
          "(junctions). Returns {'bodies', 'shapes', 'joints'}.")
      .def("add_body", &CableBuilder::addBody, nb::arg("body"))
      .def("add_shape", &CableBuilder::addShape, nb::arg("shape"))
      .def("add_joint", &CableBuilder::addJoint, nb::arg("joint"),
           nb::arg("filter_collisions") = true)
      .def("filter_shape_pair", &CableBuilder::filterShapePair, nb::arg("a"), nb::arg("b"))
      .def_prop_ro("num_bodies", &CableBuilder::numBodies)
      .def_prop_ro("num_shapes", &CableBuilder::numShapes)
      .def_prop_ro("num_joints", &CableBuilder::numJoints)
      .def(
          "finalize", [](const CableBuilder& b) { return b.finalize(); },
          "Validates, resolves the collision filters, colors the bodies; returns a RigidModel.");

  m.def(
      "capsule_mass_properties",
      [](float radius, float halfHeight, float density) {
        const CapsuleMassProperties p = capsuleMassProperties(radius, halfHeight, density);
        const Mat33& a = p.inertia;
        return nb::make_tuple(p.mass,
                              nb::make_tuple(nb::make_tuple(a.m[0][0], a.m[0][1], a.m[0][2]),
                                             nb::make_tuple(a.m[1][0], a.m[1][1], a.m[1][2]),
                                             nb::make_tuple(a.m[2][0], a.m[2][1], a.m[2][2])));
      },
      nb::arg("radius"), nb::arg("half_height"), nb::arg("density"),
      "(mass, inertia) of a solid capsule (axis z, centred).");

  m.def(
      "combine_worlds",
      [](const nb::list& models, const Vec3& spacing) -> nb::object {
        if (nb::len(models) == 0) throw Error("combine_worlds: no models given");
        if (nb::isinstance<ModelDesc>(models[0])) {
          const std::vector<const ModelDesc*> cloths = modelsOf<ModelDesc>(models);
          return nb::cast(combineWorlds(std::span<const ModelDesc* const>(cloths), spacing));
        }
        const std::vector<const RigidDesc*> rigids = modelsOf<RigidDesc>(models);
        return nb::cast(combineWorlds(std::span<const RigidDesc* const>(rigids), spacing));
      },
      nb::arg("models"), nb::arg("spacing") = Vec3{},
      "Finalized models (all ClothModel or all RigidModel) as worlds of one model that never "
      "touch, world k moved by k · spacing (a parameter sweep when they differ).");
  m.def("replicate_worlds", &replicateWorlds, nb::arg("model"), nb::arg("count"),
        nb::arg("spacing") = Vec3{}, "count copies of a RigidModel as worlds of one model.");

  m.def(
      "load_obj",
      [](const std::string& path) {
        const MeshData mesh = loadObjMesh(path);
        return nb::make_tuple(floatArray(mesh.vertices), intArray(mesh.triangles));
      },
      nb::arg("path"),
      "(vertices (n, 3), triangles (m, 3)) of a Wavefront OBJ, for ClothBuilder.add_cloth_mesh.");
}

}  // namespace weft::python
