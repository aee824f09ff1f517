// weft._weft: the plain data types (math, materials, shapes, motions, solver options), bound as
// classes with one read-write attribute per field and the C++ defaults. weft/__init__.py gives
// each a keyword constructor (weft.TriangleMaterial(ke=500)) and a repr.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "apps/python/bindings.h"
#include "collision/self_contact_detector.h"
#include "kernels/kinematics.h"
#include "kernels/materials.h"
#include "kernels/rod_joint.h"
#include "kernels/shape.h"
#include "solver/cable_builder.h"
#include "solver/cloth_builder.h"
#include "solver/model.h"
#include "solver/rigid_model.h"

namespace weft::python {

bool readNumbers(PyObject* source, float* out, int count) {
  if (PyUnicode_Check(source) || PyBytes_Check(source)) return false;
  PyObject* sequence = PySequence_Fast(source, "");
  if (!sequence) {
    PyErr_Clear();
    return false;
  }
  bool ok = PySequence_Fast_GET_SIZE(sequence) == count;
  for (int i = 0; ok && i < count; ++i) {
    const double value = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(sequence, i));
    if (value == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      ok = false;
    }
    out[i] = float(value);
  }
  Py_DECREF(sequence);
  return ok;
}

nb::object floatArray(const float* data, size_t rows, size_t columns) {
  float* copy = new float[rows * columns];
  if (rows * columns != 0) std::memcpy(copy, data, rows * columns * sizeof(float));
  nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  const size_t shape[2] = {rows, columns};
  return nb::cast(nb::ndarray<nb::numpy, float>(copy, 2, shape, owner));
}

nb::object intArray(const int* data, size_t rows, size_t columns) {
  int* copy = new int[rows * columns];
  if (rows * columns != 0) std::memcpy(copy, data, rows * columns * sizeof(int));
  nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<int*>(p); });
  const size_t shape[2] = {rows, columns};
  return nb::cast(nb::ndarray<nb::numpy, int>(copy, 2, shape, owner));
}

namespace {

/// A 3×3 matrix as a tuple of three rows, and back from any nested sequence of 3 × 3 numbers.
nb::tuple matrixToPython(const Mat33& a) {
  return nb::make_tuple(nb::make_tuple(a.m[0][0], a.m[0][1], a.m[0][2]),
                        nb::make_tuple(a.m[1][0], a.m[1][1], a.m[1][2]),
                        nb::make_tuple(a.m[2][0], a.m[2][1], a.m[2][2]));
}
Mat33 matrixFromPython(nb::handle rows, const char* what) {
  Mat33 a;
  bool ok = nb::len(rows) == 3;
  for (int r = 0; ok && r < 3; ++r) ok = readNumbers(rows[r].ptr(), a.m[r], 3);
  if (!ok) throw nb::value_error((std::string(what) + " must be 3 rows of 3 numbers").c_str());
  return a;
}

}  // namespace

bool isField(nb::handle type, nb::handle name) {
  if (!nb::isinstance<nb::str>(name) || nb::cast<std::string>(name).starts_with("_")) return false;
  nb::object attribute = nb::getattr(type, name, nb::none());  // a property is its own class attr
  return nb::isinstance(attribute, nb::module_::import_("builtins").attr("property"));
}

std::string fieldList(nb::handle type) {
  std::string names;
  for (nb::handle name : type.attr("__dict__"))  // in the order the fields were bound
    if (isField(type, name)) names += (names.empty() ? "" : ", ") + nb::cast<std::string>(name);
  return names;
}

std::string dataRepr(nb::handle self) {
  nb::handle type = self.type();
  std::string text = nb::cast<std::string>(type.attr("__name__")) + "(";
  bool first = true;
  for (nb::handle name : type.attr("__dict__")) {
    if (!isField(type, name)) continue;
    text += (first ? "" : ", ") + nb::cast<std::string>(name) + "=" +
            nb::cast<std::string>(nb::repr(self.attr(name)));
    first = false;
  }
  return text + ")";
}

void bindTypes(nb::module_& m) {
  dataClass(
      nb::class_<Transform>(m, "Transform",
                            "A rigid transform: world = rotate(q, local) + p; q = (x, y, z, w).")
          .def_rw("p", &Transform::p, "translation [m]")
          .def_rw("q", &Transform::q, "unit quaternion (x, y, z, w)"));

  dataClass(nb::class_<TriangleMaterial>(m, "TriangleMaterial", "Membrane material of a triangle.")
                .def_rw("ke", &TriangleMaterial::ke, "shear stiffness [Pa·m]")
                .def_rw("ka", &TriangleMaterial::ka, "area stiffness [Pa·m]")
                .def_rw("kd", &TriangleMaterial::kd, "damping [Pa·m·s]"));
  dataClass(
      nb::class_<EdgeMaterial>(m, "EdgeMaterial", "Bending material of a hinge, per rest length.")
          .def_rw("ke", &EdgeMaterial::ke, "bending stiffness [N·m/rad²/m]")
          .def_rw("kd", &EdgeMaterial::kd, "bending damping [N·m·s/rad²/m]"));
  dataClass(
      nb::class_<ContactMaterial>(m, "ContactMaterial", "Contact stiffness, damping and friction.")
          .def_rw("ke", &ContactMaterial::ke, "normal stiffness [N/m]")
          .def_rw("kd", &ContactMaterial::kd, "normal damping [N·s/m]")
          .def_rw("mu", &ContactMaterial::mu, "Coulomb friction coefficient"));

  nb::enum_<ShapeType>(m, "ShapeType")
      .value("PLANE", ShapeType::Plane)
      .value("BOX", ShapeType::Box)
      .value("SPHERE", ShapeType::Sphere)
      .value("CAPSULE", ShapeType::Capsule);
  dataClass(
      nb::class_<ShapeGeometry>(m, "ShapeGeometry",
                                "A shape in its own frame: plane z = 0 (normal +z), box (half "
                                "extents), sphere (radius), capsule (axis z, radius, half height).")
          .def_rw("type", &ShapeGeometry::type)
          .def_rw("half_extents", &ShapeGeometry::halfExtents, "box [m]")
          .def_rw("radius", &ShapeGeometry::radius, "sphere, capsule [m]")
          .def_rw("half_height", &ShapeGeometry::halfHeight, "capsule, caps excluded [m]"));

  nb::enum_<MotionType>(m, "MotionType")
      .value("STATIC", MotionType::Static)
      .value("LINEAR", MotionType::Linear)
      .value("SAMPLED", MotionType::Sampled);
  dataClass(
      nb::class_<ShapeMotion>(m, "Motion",
                              "Prescribed motion of a shape or kinematic body, evaluated on the "
                              "device from simulation time.")
          .def_rw("type", &ShapeMotion::type)
          .def_rw("pose0", &ShapeMotion::pose0, "pose at t = 0")
          .def_rw("linear_velocity", &ShapeMotion::linearVelocity, "LINEAR [m/s]")
          .def_rw("angular_velocity", &ShapeMotion::angularVelocity,
                  "LINEAR, about the origin [rad/s]")
          .def_rw("start_time", &ShapeMotion::startTime, "[s]")
          .def_rw("stop_time", &ShapeMotion::stopTime, "[s]")
          .def_rw("sample_interval", &ShapeMotion::sampleInterval,
                  "SAMPLED: seconds between poses"));

  dataClass(
      nb::class_<ShapeDesc>(m, "Shape", "A collision shape the cloth touches (static or moving).")
          .def_rw("name", &ShapeDesc::name)
          .def_rw("geometry", &ShapeDesc::geometry)
          .def_rw("material", &ShapeDesc::material)
          .def_rw("margin", &ShapeDesc::margin, "thickens the surface [m]")
          .def_rw("motion", &ShapeDesc::motion, "its pose over time (motion.pose0 when static)")
          .def_rw("motion_samples", &ShapeDesc::motionSamples,
                  "SAMPLED motion: the pose at t = k · motion.sample_interval"));

  dataClass(nb::class_<ParticleDriver>(
                m, "ParticleDriver",
                "Rotates held particles rigidly about an axis (cloth_twist's edges).")
                .def_rw("axis_point", &ParticleDriver::axisPoint, "[m]")
                .def_rw("axis_direction", &ParticleDriver::axisDirection, "unit axis")
                .def_rw("angular_speed", &ParticleDriver::angularSpeed, "[rad/s]")
                .def_rw("start_time", &ParticleDriver::startTime, "[s]")
                .def_rw("stop_time", &ParticleDriver::stopTime, "[s]"));
  dataClass(
      nb::class_<DriverDesc>(m, "Driver", "A particle driver and the (fixed) particles it moves.")
          .def_rw("driver", &DriverDesc::driver)
          .def_rw("particles", &DriverDesc::particles));

  dataClass(nb::class_<ClothGridParams>(
                m, "ClothGrid",
                "A regular grid cloth: (dim_x + 1) × (dim_y + 1) vertices, vertex "
                "(x, y) = y·(dim_x + 1) + x at local (x·cell_x, y·cell_y, 0).")
                .def_rw("position", &ClothGridParams::position, "[m]")
                .def_rw("rotation", &ClothGridParams::rotation, "unit quaternion (x, y, z, w)")
                .def_rw("velocity", &ClothGridParams::velocity, "initial velocity [m/s]")
                .def_rw("dim_x", &ClothGridParams::dimX)
                .def_rw("dim_y", &ClothGridParams::dimY)
                .def_rw("cell_x", &ClothGridParams::cellX, "[m]")
                .def_rw("cell_y", &ClothGridParams::cellY, "[m]")
                .def_rw("mass", &ClothGridParams::mass, "per particle [kg]")
                .def_rw("fix_left", &ClothGridParams::fixLeft)
                .def_rw("fix_right", &ClothGridParams::fixRight)
                .def_rw("fix_bottom", &ClothGridParams::fixBottom)
                .def_rw("fix_top", &ClothGridParams::fixTop)
                .def_rw("triangle_material", &ClothGridParams::triangleMaterial)
                .def_rw("edge_material", &ClothGridParams::edgeMaterial)
                .def_rw("particle_radius", &ClothGridParams::particleRadius, "[m]"));

  nb::enum_<DetectionTraversal>(m, "DetectionTraversal")
      .value("COOPERATIVE", DetectionTraversal::Cooperative)
      .value("STACKLESS", DetectionTraversal::Stackless)
      .value("SHARED_STACK", DetectionTraversal::SharedStack);
  using SC = SelfContactOptions;
  dataClass(nb::class_<SC>(m, "SelfContactOptions", "Cloth self-contact (solver/model.h).")
                .def_rw("enabled", &SC::enabled)
                .def_rw("radius", &SC::radius, "[m]")
                .def_rw("margin", &SC::margin, "detection distance, >= radius [m]")
                .def_rw("relaxation", &SC::relaxation)
                .def_rw("detection_interval", &SC::detectionInterval)
                .def_rw("topological_filter", &SC::topologicalFilter)
                .def_rw("rest_exclusion", &SC::restExclusion, "[m]")
                .def_rw("edge_parallel_epsilon", &SC::edgeParallelEpsilon)
                .def_rw("traversal", &SC::traversal)
                .def_rw("bvh_rebuild_interval", &SC::bvhRebuildInterval)
                .def_rw("vertex_triangle_capacity", &SC::vertexTriangleCapacity)
                .def_rw("edge_edge_capacity", &SC::edgeEdgeCapacity)
                .def_rw("triangle_vertex_capacity", &SC::triangleVertexCapacity)
                .def_rw("reuse_slack", &SC::reuseSlack, "[m]"));
  dataClass(nb::class_<SolverOptions>(m, "SolverOptions", "Cloth (VBD) solver settings.")
                .def_rw("iterations", &SolverOptions::iterations)
                .def_rw("friction_epsilon", &SolverOptions::frictionEpsilon, "[m/s]")
                .def_rw("tile_solve", &SolverOptions::tileSolve)
                .def_rw("gravity", &SolverOptions::gravity, "[m/s²]")
                .def_rw("particle_contact", &SolverOptions::particleContact)
                .def_rw("shape_contact_margin", &SolverOptions::shapeContactMargin, "[m]")
                .def_rw("self_contact", &SolverOptions::selfContact)
                .def("validate", &SolverOptions::validate,
                     "Raises weft.Error naming the first bad field."));

  nb::enum_<OneLaneLevels>(m, "OneLaneLevels",
                           "How many tree levels the body solve's one-lane tiles keep in shared "
                           "memory (solver/rigid_model.h); the same bits in every mode.")
      .value("AUTO", OneLaneLevels::Auto)
      .value("THREE", OneLaneLevels::Three)
      .value("TWO", OneLaneLevels::Two);
  nb::enum_<IterationLaunches>(m, "IterationLaunches",
                               "How a substep's iterations are launched: a launch per color and "
                               "iteration, or one per substep with a warp's lanes per world "
                               "(solver/rigid_model.h); the same bits either way.")
      .value("AUTO", IterationLaunches::Auto)
      .value("PER_COLOR", IterationLaunches::PerColor)
      .value("PER_WORLD", IterationLaunches::PerWorld);
  using RO = RigidSolverOptions;
  dataClass(
      nb::class_<RO>(m, "RigidSolverOptions",
                     "Cable (AVBD) solver settings (solver/rigid_model.h).")
          .def_rw("iterations", &RO::iterations)
          .def_rw("gravity", &RO::gravity, "[m/s²]")
          .def_rw("friction_epsilon", &RO::frictionEpsilon, "[m/s]")
          .def_rw("gamma", &RO::gamma)
          .def_rw("joint_alpha", &RO::jointAlpha)
          .def_rw("contact_alpha", &RO::contactAlpha)
          .def_rw("collide_interval", &RO::collideInterval)
          .def_rw("contact_capacity", &RO::contactCapacity)
          .def_rw("pair_capacity", &RO::pairCapacity)
          .def_rw("pair_reuse_margin", &RO::pairReuseMargin, "[m]")
          .def_rw("all_pairs_shapes", &RO::allPairsShapes)
          .def_rw("all_pairs_runs_from_worlds", &RO::allPairsRunsFromWorlds)
          .def_rw("fold_duals_up_to_bodies", &RO::foldDualsUpToBodies)
          .def_rw("joint_duals_in_blocks_up_to_world_color", &RO::jointDualsInBlocksUpToWorldColor)
          .def_rw("begin_beside_detection_up_to_bodies", &RO::beginBesideDetectionUpToBodies)
          .def_rw("contact_history", &RO::contactHistory)
          .def_rw("sticky_contacts", &RO::stickyContacts)
          .def_rw("match_distance", &RO::matchDistance, "[m]")
          .def_rw("match_normal_dot", &RO::matchNormalDot)
          .def_rw("chebyshev_rho", &RO::chebyshevRho)
          .def_rw("record_convergence", &RO::recordConvergence)
          .def_rw("one_lane_levels", &RO::oneLaneLevels)
          .def_rw("iteration_launches", &RO::iterationLaunches)
          .def_rw("row_slot_items", &RO::rowSlotItems)
          .def("validate", &RO::validate, "Raises weft.Error naming the first bad field."));

  dataClass(nb::class_<RodStiffness>(
                m, "RodStiffness",
                "The four material slots of a rod's joints; shear defaults to stretch "
                "and twist to bend (None: not given).")
                .def_rw("stretch_stiffness", &RodStiffness::stretchStiffness, "[N/m]")
                .def_rw("stretch_damping", &RodStiffness::stretchDamping, "[N·s/m]")
                .def_rw("shear_stiffness", &RodStiffness::shearStiffness)
                .def_rw("shear_damping", &RodStiffness::shearDamping)
                .def_rw("bend_stiffness", &RodStiffness::bendStiffness, "[N·m/rad]")
                .def_rw("bend_damping", &RodStiffness::bendDamping, "[N·m·s/rad]")
                .def_rw("twist_stiffness", &RodStiffness::twistStiffness)
                .def_rw("twist_damping", &RodStiffness::twistDamping));
  dataClass(nb::class_<RodParams>(m, "RodParams", "A rod of capsules joined by ROD joints.")
                .def_rw("name", &RodParams::name)
                .def_rw("radius", &RodParams::radius, "[m]")
                .def_rw("density", &RodParams::density, "[kg/m³]")
                .def_rw("material", &RodParams::material)
                .def_rw("margin", &RodParams::margin, "[m]")
                .def_rw("gap", &RodParams::gap, "speculative contact gap [m]")
                .def_rw("stiffness", &RodParams::stiffness)
                .def_rw("dahl_eps_max", &RodParams::dahlEpsMax)
                .def_rw("dahl_tau", &RodParams::dahlTau, "[rad]")
                .def_rw("closed", &RodParams::closed)
                .def_rw("wrap_in_articulation", &RodParams::wrapInArticulation)
                .def_rw("junction_collision_filter", &RodParams::junctionCollisionFilter));

  dataClass(
      nb::class_<BodyDesc>(m, "Body", "A rigid body (mass 0 or kinematic: moved by its motion).")
          .def_rw("name", &BodyDesc::name)
          .def_rw("pose", &BodyDesc::pose, "origin pose at t = 0")
          .def_rw("com", &BodyDesc::com, "centre of mass in the body frame [m]")
          .def_rw("mass", &BodyDesc::mass, "[kg]; 0 = kinematic")
          .def_prop_rw(
              "inertia", [](const BodyDesc& b) { return matrixToPython(b.inertia); },
              [](BodyDesc& b, nb::handle rows) { b.inertia = matrixFromPython(rows, "inertia"); },
              "body-frame inertia about the COM, 3 rows of 3 [kg·m²]")
          .def_rw("kinematic", &BodyDesc::kinematic)
          .def_rw("linear_velocity", &BodyDesc::linearVelocity, "[m/s]")
          .def_rw("angular_velocity", &BodyDesc::angularVelocity, "world [rad/s]")
          .def_rw("motion", &BodyDesc::motion)
          .def_rw("motion_samples", &BodyDesc::motionSamples));
  dataClass(nb::class_<RigidShapeDesc>(m, "RigidShape", "A collision shape on a body (-1: static).")
                .def_rw("name", &RigidShapeDesc::name)
                .def_rw("body", &RigidShapeDesc::body)
                .def_rw("geometry", &RigidShapeDesc::geometry)
                .def_rw("local_pose", &RigidShapeDesc::localPose)
                .def_rw("material", &RigidShapeDesc::material)
                .def_rw("margin", &RigidShapeDesc::margin, "[m]")
                .def_rw("gap", &RigidShapeDesc::gap, "[m]"));
  nb::enum_<JointType>(m, "JointType").value("ROD", JointType::Rod).value("BALL", JointType::Ball);
  dataClass(
      nb::class_<JointDesc>(m, "Joint", "A ROD or BALL joint between two bodies (-1: the world).")
          .def_rw("type", &JointDesc::type)
          .def_rw("parent", &JointDesc::parent)
          .def_rw("child", &JointDesc::child)
          .def_rw("parent_anchor", &JointDesc::parentAnchor)
          .def_rw("child_anchor", &JointDesc::childAnchor)
          .def_rw("stretch_stiffness", &JointDesc::stretchStiffness, "[N/m]")
          .def_rw("shear_stiffness", &JointDesc::shearStiffness, "[N/m]")
          .def_rw("bend_stiffness", &JointDesc::bendStiffness, "[N·m/rad]")
          .def_rw("twist_stiffness", &JointDesc::twistStiffness, "[N·m/rad]")
          .def_rw("stretch_damping", &JointDesc::stretchDamping)
          .def_rw("shear_damping", &JointDesc::shearDamping)
          .def_rw("bend_damping", &JointDesc::bendDamping)
          .def_rw("twist_damping", &JointDesc::twistDamping)
          .def_rw("dahl_eps_max", &JointDesc::dahlEpsMax)
          .def_rw("dahl_tau", &JointDesc::dahlTau, "[rad]"));
}

}  // namespace weft::python
