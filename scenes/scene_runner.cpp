#include "scenes/scene_runner.h"

#include <algorithm>

#include "kernels/runtime/errors.h"

#include "scenes/worlds.h"
#include "solver/rigid_simulation.h"
#include "solver/simulation.h"

namespace weft {
namespace {

class ClothRunner final : public SceneRunner {
 public:
  ClothRunner(const Device& device, const Scene& scene, const SceneOptions& options, bool useGraphs)
      : scene_(scene),
        desc_(buildClothWorlds(scene, options).desc),
        sim_(device, desc_, scene.solver, 1.0 / scene.fps, scene.substeps, useGraphs) {}
  void advanceFrame() override { sim_.advanceFrame(); }
  double lastFrameMs() const override { return sim_.lastFrameMs(); }
  void resetGraphs() override { sim_.resetGraphs(); }
  void launchSubstep(int substepInFrame) override {
    sim_.solver().step(sim_.state(), sim_.scratch(), substepInFrame);
  }
  void setListReuse(bool enabled) override { sim_.solver().setListReuse(enabled); }
  int lastFrameContacts() const override {
    // Candidate pairs summed over the frame's detections; with kept lists only the detections
    // that built lists counted theirs, so scale to every detection.
    const ContactStatus& s = sim_.contactReport().lastFrame;
    if (!scene_.solver.selfContact.enabled || s.listBuilds == 0) return 0;
    return int(static_cast<long long>(s.totalPairs) * sim_.detectionsPerFrame() / s.listBuilds);
  }
  bool measuresDensestFrame() const override { return scene_.solver.selfContact.enabled; }
  std::string sizeLabel() const override {
    return std::to_string(desc_.numParticles()) + " particles";
  }
  int elementCount() const override { return desc_.numParticles(); }
  int iterations() const override { return scene_.solver.iterations; }
  int substepsPerFrame() const override { return sim_.substepsPerFrame(); }
  std::vector<std::string> regrowths() const override { return sim_.contactReport().regrowths; }
  void carryCapacitiesInto(Scene& scene) const override {
    const Simulation::ContactReport& r = sim_.contactReport();
    SelfContactOptions& sc = scene.solver.selfContact;
    if (!sc.enabled) return;
    sc.vertexTriangleCapacity = std::max(sc.vertexTriangleCapacity, r.vertexTriangleCapacity);
    sc.edgeEdgeCapacity = std::max(sc.edgeEdgeCapacity, r.edgeEdgeCapacity);
    sc.triangleVertexCapacity = std::max(sc.triangleVertexCapacity, r.triangleVertexCapacity);
  }

 private:
  const Scene& scene_;
  ModelDesc desc_;
  Simulation sim_;
};

class CableRunner final : public SceneRunner {
 public:
  CableRunner(const Device& device, const Scene& scene, const SceneOptions& options, bool useGraphs)
      : scene_(scene),
        desc_(buildRigidWorlds(scene, options).desc),
        sim_(device, desc_, scene.rigidSolver, 1.0 / scene.fps, scene.substeps, useGraphs) {}
  void advanceFrame() override { sim_.advanceFrame(); }
  double lastFrameMs() const override { return sim_.lastFrameMs(); }
  void resetGraphs() override { sim_.resetGraphs(); }
  void launchSubstep(int k) override { sim_.launchSubstep(k); }
  int lastFrameContacts() const override { return sim_.contactReport().lastFrameRows; }
  bool measuresDensestFrame() const override { return false; }
  std::string sizeLabel() const override { return std::to_string(desc_.numBodies()) + " bodies"; }
  int elementCount() const override { return desc_.numBodies(); }
  int iterations() const override { return scene_.rigidSolver.iterations; }
  int substepsPerFrame() const override { return sim_.substepsPerFrame(); }
  std::vector<std::string> regrowths() const override { return sim_.contactReport().regrowths; }
  void carryCapacitiesInto(Scene& scene) const override {
    const RigidSimulation::ContactReport& r = sim_.contactReport();
    RigidSolverOptions& o = scene.rigidSolver;
    const int shapes = std::max(desc_.numShapes(), 1);
    // The rows are max(256, contactCapacity x shapes) (solver/rigid_model.cpp).
    o.contactCapacity = std::max(o.contactCapacity, (r.rowCapacity + shapes - 1) / shapes);
    o.pairCapacity = std::max(o.pairCapacity, r.pairCapacity);
  }

 private:
  const Scene& scene_;
  RigidDesc desc_;
  RigidSimulation sim_;
};

}  // namespace

std::unique_ptr<SceneRunner> makeSceneRunner(const Device& device, const Scene& scene,
                                             const SceneOptions& options, bool useGraphs) {
  if (scene.cable) return std::make_unique<CableRunner>(device, scene, options, useGraphs);
  return std::make_unique<ClothRunner>(device, scene, options, useGraphs);
}

}  // namespace weft
