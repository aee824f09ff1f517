// weft._weft: Device and Simulation. A Simulation owns copies of its models and shares its Device
// (a Python Device object, or one it opened from "auto" / "cuda" / "cpu"); step() releases the GIL
// while frames run and stops between frames at Ctrl-C. State reads and writes are NumPy copies;
// the *_view() methods hand out the state buffers themselves (NumPy on the CPU backend, DLPack on
// CUDA), valid while the Simulation lives.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <type_traits>

#include "apps/python/bindings.h"
#include "collision/intersection_check.h"
#include "kernels/runtime/device.h"
#include "kernels/runtime/errors.h"
#include "kernels/runtime/table_selection.h"
#include "scenes/cable_checks.h"
#include "scenes/checks.h"
#include "scenes/scene.h"
#include "scenes/worlds.h"
#include "solver/cable_builder.h"
#include "solver/simulation.h"

namespace weft::python {
namespace {

/// A backend and the launch table in effect on it.
struct PyDevice {
  std::shared_ptr<Device> device;
  int ordinal = 0;
  TableSelection table;
};

nb::dict tableDict(const TableSelection& t) {
  nb::dict d;
  d["applied"] = t.table.has_value();
  d["path"] = t.path;
  d["origin"] = t.origin;
  d["reason"] = t.reason;
  d["warning"] = t.warning;
  return d;
}

std::shared_ptr<PyDevice> openPyDevice(const std::string& name, int ordinal) {
  auto out = std::make_shared<PyDevice>();
  DeviceOptions options;
  options.cudaOrdinal = ordinal;
  out->device = Device::open(parseDeviceRequest(name), options);
  out->ordinal = ordinal;
  return out;
}

/// A device given as a Device or as a name; a name opens one with the launch table `weft run`
/// would pick for `scene` and `worlds`.
std::shared_ptr<PyDevice> deviceOf(nb::handle device, const std::string& scene, int worlds) {
  if (nb::isinstance<PyDevice>(device)) return nb::cast<std::shared_ptr<PyDevice>>(device);
  if (!nb::isinstance<nb::str>(device))
    throw nb::type_error("device must be a weft.Device or one of 'auto', 'cuda', 'cpu'");
  auto out = openPyDevice(nb::cast<std::string>(device), 0);
  out->table = applyLaunchTable(*out->device, "", scene, worlds);
  return out;
}

nb::dict checkDict(const CheckResult& c) {
  nb::dict d;
  d["name"] = c.name;
  d["pass"] = c.pass;
  d["detail"] = c.detail;
  d["informational"] = c.informational;
  return d;
}

struct PySimulation {
  std::shared_ptr<PyDevice> device;
  std::unique_ptr<const ModelDesc> cloth;  // on the heap: the parts keep their address
  std::unique_ptr<const RigidDesc> rigid;
  std::unique_ptr<Simulation> sim;
  const Scene* scene = nullptr;  // from_scene
  int worlds = 1;
  // Set while a call runs without the GIL (step, self_intersections): the solver's buffers (which
  // a frame may regrow) are one thread's at a time, so a second such call, or a read or write of
  // the state, from another thread meanwhile is refused instead of racing it.
  // (On the heap: a PySimulation is built, then moved into its Python object.)
  std::unique_ptr<std::atomic<bool>> busy = std::make_unique<std::atomic<bool>>(false);
  static constexpr const char* kBusy =
      "this Simulation is stepping in another thread; use it from one thread at a time (or give "
      "each thread a Simulation of its own)";

  void requireIdle() const {
    if (busy->load()) throw Error(kBusy);
  }
  /// Marks the simulation busy for its lifetime (refused when it already is).
  struct BusyScope {
    explicit BusyScope(PySimulation& s) : s_(s) {
      if (s_.busy->exchange(true)) throw Error(kBusy);
    }
    ~BusyScope() { s_.busy->store(false); }
    BusyScope(const BusyScope&) = delete;
    BusyScope& operator=(const BusyScope&) = delete;

   private:
    PySimulation& s_;
  };

  ClothPart& clothPart() {
    requireIdle();
    if (!sim->hasCloth()) throw Error("this simulation has no cloth");
    return sim->cloth();
  }
  RigidPart& rigidPart() {
    requireIdle();
    if (!sim->hasRigid()) throw Error("this simulation has no rigid model");
    return sim->rigid();
  }
  CheckInput clothInput(std::vector<Vec3>& positions, std::vector<Vec3>& velocities) {
    positions = clothPart().positions();
    velocities = clothPart().velocities();
    return CheckInput{*cloth, positions, velocities, sim->framesDone()};
  }
};

void make(PySimulation& s, nb::handle device, const ModelDesc* cloth, const RigidDesc* rigid,
          const SolverOptions& clothOptions, const RigidSolverOptions& rigidOptions, double fps,
          int substeps, bool useGraphs, const std::string& scene, int worlds) {
  if (!cloth && !rigid) throw Error("Simulation: give a cloth model, a rigid model or both");
  if (!(fps > 0.0)) throw Error("Simulation: fps must be > 0");
  if (substeps < 1) throw Error("Simulation: substeps must be >= 1");
  s.device = deviceOf(device, scene, worlds);
  if (cloth) s.cloth = std::make_unique<const ModelDesc>(*cloth);
  if (rigid) s.rigid = std::make_unique<const RigidDesc>(*rigid);
  s.worlds = worlds;
  nb::gil_scoped_release release;
  s.sim = std::make_unique<Simulation>(*s.device->device, s.cloth.get(), clothOptions,
                                       s.rigid.get(), rigidOptions, 1.0 / fps, substeps, useGraphs);
}

/// State buffer `b` itself, shaped (count, floats per element): NumPy on the CPU backend, a
/// DLPack-capable array on CUDA; `owner` (the Simulation) lives as long as the view.
template <class T>
nb::object viewOf(PySimulation& s, DeviceBuffer<T>& b, nb::handle owner) {
  static_assert(sizeof(T) % sizeof(float) == 0);
  float* data = reinterpret_cast<float*>(b.data());
  const size_t shape[2] = {b.size(), sizeof(T) / sizeof(float)};
  if (!s.device->device->isCuda())
    return nb::cast(nb::ndarray<nb::numpy, float>(data, 2, shape, owner));
  return nb::cast(nb::ndarray<float>(data, 2, shape, owner, nullptr, nb::dtype<float>(),
                                     nb::device::cuda::value, s.device->ordinal));
}

template <class T>
void uploadRows(DeviceBuffer<T>& buffer, const FloatRows& values, const char* what) {
  std::vector<T> rows = rowsOf<T>(values, what);
  if (rows.size() != buffer.size())
    throw nb::value_error((std::string(what) + " must have " + std::to_string(buffer.size()) +
                           " rows, not " + std::to_string(rows.size()))
                              .c_str());
  // The solver takes the state as it is: a NaN would spread through the whole model in a step.
  constexpr size_t columns = sizeof(T) / sizeof(float);
  const float* v = reinterpret_cast<const float*>(rows.data());
  for (size_t i = 0; i < rows.size() * columns; ++i)
    if (!std::isfinite(v[i]))
      throw nb::value_error((std::string(what) + ": row " + std::to_string(i / columns) +
                             " holds a non-finite value (" + std::to_string(v[i]) +
                             "); the state must be finite")
                                .c_str());
  if constexpr (std::is_same_v<T, Transform>)
    for (size_t i = 0; i < rows.size(); ++i) {
      const Quat& q = rows[i].q;
      if (!(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w > 1e-12f))
        throw nb::value_error((std::string(what) + ": row " + std::to_string(i) +
                               " has a zero rotation quaternion; give a unit quaternion")
                                  .c_str());
    }
  buffer.upload(rows);
}

}  // namespace

void bindSimulation(nb::module_& m) {
  nb::class_<PyDevice>(m, "Device",
                       "A backend: 'cuda' (a GPU), 'cpu' (OpenMP) or 'auto' (CUDA if a GPU is "
                       "visible). Opened with the launch table weft run would use.")
      .def(nb::new_([](const std::string& name, int ordinal, const std::string& launchTable) {
             auto d = openPyDevice(name, ordinal);
             d->table = applyLaunchTable(*d->device, launchTable);
             return d;
           }),
           nb::arg("name") = "auto", nb::arg("ordinal") = 0, nb::arg("launch_table") = "")
      .def_prop_ro("is_cuda", [](const PyDevice& d) { return d.device->isCuda(); })
      .def_prop_ro("description", [](const PyDevice& d) { return d.device->describe(); })
      .def_prop_ro(
          "launch_table", [](const PyDevice& d) { return tableDict(d.table); },
          "the table in effect: {'applied', 'path', 'origin', 'reason', 'warning'}")
      .def(
          "apply_launch_table",
          [](PyDevice& d, const std::string& path, const std::string& scene, int worlds) {
            d.table = applyLaunchTable(*d.device, path, scene, worlds);
            return tableDict(d.table);
          },
          nb::arg("path") = "", nb::arg("scene") = "", nb::arg("worlds") = 1,
          "Selects and applies a launch table as weft run does (a file, $WEFT_LAUNCH_TABLE or "
          "the shipped tables; per-scene and per-batch entries for scene and worlds).")
      .def("synchronize", [](const PyDevice& d) { d.device->synchronize(); })
      .def("__repr__",
           [](const PyDevice& d) { return "weft.Device('" + d.device->describe() + "')"; });

  nb::class_<PySimulation>(m, "Simulation",
                           "A cloth, a rigid model or both, advanced a frame at a time.")
      .def(
          "__init__",
          [](PySimulation* s, const ModelDesc* cloth, const RigidDesc* rigid,
             const std::optional<SolverOptions>& clothOptions,
             const std::optional<RigidSolverOptions>& rigidOptions, nb::handle device, double fps,
             int substeps, bool useGraphs) {
            PySimulation made;  // built first: a failure leaves no half-made object
            make(made, device, cloth, rigid, clothOptions.value_or(SolverOptions{}),
                 rigidOptions.value_or(RigidSolverOptions{}), fps, substeps, useGraphs, "", 1);
            new (s) PySimulation(std::move(made));
          },
          nb::arg("cloth").none() = nb::none(), nb::arg("rigid").none() = nb::none(),
          nb::arg("cloth_options").none() = nb::none(),
          nb::arg("rigid_options").none() = nb::none(), nb::arg("device") = "auto",
          nb::arg("fps") = 60.0, nb::arg("substeps") = 10, nb::arg("use_graphs") = true)
      .def_static(
          "from_scene",
          [](const std::string& name, const nb::dict& options, int worlds, const Vec3& spacing,
             nb::handle device, bool useGraphs) {
            const Scene& scene = findScene(name);
            SceneOptions sceneOptions;
            for (auto [key, value] : options)
              sceneOptions.values[optionKey(key)] = optionValue(value);
            sceneOptions.worlds = worlds;
            sceneOptions.worldSpacing = spacing;
            // As weft run: a size option far too large is refused before anything is allocated.
            checkSceneFits(scene, sceneOptions, availableHostMemory(), 0);
            auto s = std::make_unique<PySimulation>();
            std::optional<ModelDesc> cloth;
            std::optional<RigidDesc> rigid;
            {
              nb::gil_scoped_release release;
              if (scene.hasCloth()) cloth = buildClothWorlds(scene, sceneOptions).desc;
              if (scene.hasRigid()) rigid = buildRigidWorlds(scene, sceneOptions).desc;
            }
            make(*s, device, cloth ? &*cloth : nullptr, rigid ? &*rigid : nullptr,
                 scene.cloth.solver, scene.rigid.solver, scene.fps, scene.substeps, useGraphs,
                 scene.name, worlds);
            s->scene = &scene;
            return s;
          },
          nb::arg("name"), nb::arg("options") = nb::dict(), nb::arg("worlds") = 1,
          nb::arg("spacing") = Vec3{}, nb::arg("device") = "auto", nb::arg("use_graphs") = true,
          "A registered scene's model, solver settings, fps and substeps (weft.scenes()); "
          "options as weft run's --scene-option (a list 'a,b' or range 'a:b' spreads over worlds).")
      .def(
          "step",
          [](PySimulation& s, int frames) {
            if (frames < 0) throw Error("step: frames must be >= 0");
            const PySimulation::BusyScope busy(s);
            for (int f = 0; f < frames; ++f) {
              {
                nb::gil_scoped_release release;
                s.sim->advanceFrame();
              }
              if (PyErr_CheckSignals() != 0) throw nb::python_error();
            }
          },
          nb::arg("frames") = 1,
          "Runs `frames` frames (each all its substeps; one graph replay on CUDA) and waits.")
      .def_prop_ro("device", [](const PySimulation& s) { return s.device; })
      .def_prop_ro("scene",
                   [](const PySimulation& s) { return s.scene ? s.scene->name : std::string(); })
      .def_prop_ro("worlds", [](const PySimulation& s) { return s.worlds; })
      .def_prop_ro("frames_done", [](const PySimulation& s) { return s.sim->framesDone(); })
      .def_prop_ro("substeps", [](const PySimulation& s) { return s.sim->substepsPerFrame(); })
      .def_prop_ro("substep_seconds", [](const PySimulation& s) { return s.sim->substepSeconds(); })
      .def_prop_ro(
          "time",
          [](const PySimulation& s) {
            return double(s.sim->framesDone()) * s.sim->substepsPerFrame() *
                   s.sim->substepSeconds();
          },
          "simulated time [s]")
      .def_prop_ro(
          "last_frame_ms", [](const PySimulation& s) { return s.sim->lastFrameMs(); },
          "device time of the last frame (CUDA events; host clock on the CPU) [ms]")
      .def_prop_ro("uses_graphs", [](const PySimulation& s) { return s.sim->usesGraphs(); })
      .def_prop_ro(
          "regrowths", [](const PySimulation& s) { return s.sim->regrowths(); },
          "contact storage that grew (nothing is ever dropped), oldest first")
      .def_prop_ro(
          "cloth_model", [](const PySimulation& s) -> const ModelDesc* { return s.cloth.get(); },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "rigid_model", [](const PySimulation& s) -> const RigidDesc* { return s.rigid.get(); },
          nb::rv_policy::reference_internal)

      // Cloth state
      .def_prop_rw(
          "positions", [](PySimulation& s) { return floatArray(s.clothPart().positions()); },
          [](PySimulation& s, const FloatRows& v) {
            uploadRows(s.clothPart().state().positions, v, "positions");
          },
          "(n, 3) particle positions [m]: a copy; assigning uploads new ones")
      .def_prop_rw(
          "velocities", [](PySimulation& s) { return floatArray(s.clothPart().velocities()); },
          [](PySimulation& s, const FloatRows& v) {
            uploadRows(s.clothPart().state().velocities, v, "velocities");
          },
          "(n, 3) particle velocities [m/s]: a copy; assigning uploads new ones")
      .def(
          "positions_view",
          [](nb::handle self) {
            PySimulation& s = nb::cast<PySimulation&>(self);
            return viewOf(s, s.clothPart().state().positions, self);
          },
          "The particle positions in place, (n, 3) float32, no copy: a NumPy array on the CPU "
          "backend, device memory with __dlpack__ on CUDA (torch.from_dlpack, cupy.from_dlpack).")
      .def(
          "velocities_view",
          [](nb::handle self) {
            PySimulation& s = nb::cast<PySimulation&>(self);
            return viewOf(s, s.clothPart().state().velocities, self);
          },
          "The particle velocities in place (see positions_view).")
      .def_prop_ro(
          "cloth_contacts",
          [](PySimulation& s) {
            const ClothPart::ContactReport& r = s.clothPart().contactReport();
            nb::dict d;
            d["vertex_triangle_capacity"] = r.vertexTriangleCapacity;
            d["edge_edge_capacity"] = r.edgeEdgeCapacity;
            d["triangle_vertex_capacity"] = r.triangleVertexCapacity;
            d["detections"] = r.detections;
            d["list_builds"] = r.listBuilds;
            return d;
          },
          "self-contact storage and detections so far")

      // Rigid state
      .def_prop_rw(
          "poses", [](PySimulation& s) { return floatArray(s.rigidPart().poses()); },
          [](PySimulation& s, const FloatRows& v) {
            uploadRows(s.rigidPart().state().poses, v, "poses");
          },
          "(n, 7) body origin poses (px, py, pz, qx, qy, qz, qw): a copy; assigning uploads")
      .def_prop_rw(
          "linear_velocities",
          [](PySimulation& s) { return floatArray(s.rigidPart().linearVelocities()); },
          [](PySimulation& s, const FloatRows& v) {
            uploadRows(s.rigidPart().state().linearVelocities, v, "linear_velocities");
          },
          "(n, 3) COM velocities [m/s]")
      .def_prop_rw(
          "angular_velocities",
          [](PySimulation& s) { return floatArray(s.rigidPart().angularVelocities()); },
          [](PySimulation& s, const FloatRows& v) {
            uploadRows(s.rigidPart().state().angularVelocities, v, "angular_velocities");
          },
          "(n, 3) angular velocities, world [rad/s]")
      .def(
          "poses_view",
          [](nb::handle self) {
            PySimulation& s = nb::cast<PySimulation&>(self);
            return viewOf(s, s.rigidPart().state().poses, self);
          },
          "The body poses in place, (n, 7) float32, no copy (see positions_view).")
      .def_prop_ro(
          "rigid_contacts",
          [](PySimulation& s) {
            const RigidPart::ContactReport& r = s.rigidPart().contactReport();
            nb::dict d;
            d["largest_rows"] = r.largestRows;
            d["last_frame_rows"] = r.lastFrameRows;
            d["largest_partners"] = r.largestPartners;
            d["row_capacity"] = r.rowCapacity;
            d["pair_capacity"] = r.pairCapacity;
            d["detections"] = r.detections;
            d["frames_two_shared_levels"] = r.framesTwoSharedLevels;
            return d;
          },
          "contact rows and detections so far")

      // Checks
      .def(
          "check_finite",
          [](PySimulation& s) {
            nb::list out;
            if (s.sim->hasCloth()) {
              std::vector<Vec3> x, v;
              out.append(checkDict(checkFinite(s.clothInput(x, v))));
            }
            if (s.sim->hasRigid()) {
              const auto poses = s.rigidPart().poses();
              const auto lin = s.rigidPart().linearVelocities();
              const auto ang = s.rigidPart().angularVelocities();
              out.append(checkDict(checkBodiesFinite(
                  RigidCheckInput{*s.rigid, poses, lin, ang, 0, 0.0, nullptr, {}})));
            }
            return out;
          },
          "Every position and velocity finite: a list of {'name', 'pass', 'detail'}.")
      .def(
          "self_intersections",
          [](PySimulation& s) {
            ClothPart& part = s.clothPart();
            const PySimulation::BusyScope busy(s);
            nb::gil_scoped_release release;
            IntersectionCounter counter(*s.device->device, s.cloth->numParticles(),
                                        s.cloth->triangles, s.cloth->edges, s.cloth->worlds,
                                        s.cloth->worldRanges.triangles);
            return counter.countPerWorld(part.state().positions.data());
          },
          "Edge–triangle self-intersections of the cloth now, per world (0: none).")
      .def(
          "joint_gap",
          [](PySimulation& s) {
            const JointGap g = largestJointGap(*s.rigid, s.rigidPart().poses());
            nb::dict d;
            d["joint"] = g.joint;
            d["gap"] = g.gap;
            d["reference_length"] = g.referenceLength;
            d["non_finite"] = g.nonFinite;
            return d;
          },
          "The joint whose anchors are farthest apart relative to its reference length.")
      .def(
          "scene_checks",
          [](PySimulation& s) {
            if (!s.scene) throw Error("scene_checks: this simulation was not made by from_scene");
            if (s.worlds != 1)
              throw Error(
                  "scene_checks: judges one world; use weft.run_scene(..., worlds=N) for "
                  "the checks of every world");
            nb::list out;
            if (s.scene->hasCloth() && s.scene->cloth.checks) {
              std::vector<Vec3> x, v;
              for (const CheckResult& c : s.scene->cloth.checks(s.clothInput(x, v)))
                out.append(checkDict(c));
            }
            if (s.scene->hasRigid() && s.scene->rigid.checks) {
              if (s.scene->rigid.checksUseHistory)
                throw Error("scene_checks: " + s.scene->name +
                            "'s checks judge every frame's poses; use weft.run_scene");
              const auto poses = s.rigidPart().poses();
              const auto lin = s.rigidPart().linearVelocities();
              const auto ang = s.rigidPart().angularVelocities();
              RigidCheckInput in{*s.rigid, poses, lin, ang, 0, 0.0, nullptr, {}};
              in.frames = s.sim->framesDone();
              in.seconds = double(in.frames) * s.sim->substepsPerFrame() * s.sim->substepSeconds();
              for (const CheckResult& c : s.scene->rigid.checks(in)) out.append(checkDict(c));
            }
            return out;
          },
          "The scene's own final checks on the state now (one world; judged on the final state "
          "only, where weft run also records every frame's joint gaps and overlaps).");
}

}  // namespace weft::python
