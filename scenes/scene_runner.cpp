#include "scenes/scene_runner.h"

#include <algorithm>
#include <optional>

#include "kernels/runtime/errors.h"

#include "scenes/worlds.h"
#include "solver/simulation.h"

namespace weft {
namespace {

class SimulationRunner final : public SceneRunner {
 public:
  SimulationRunner(const Device& device, const Scene& scene, const SceneOptions& options,
                   bool useGraphs)
      : scene_(scene) {
    if (scene.hasCloth()) cloth_ = buildClothWorlds(scene, options).desc;
    if (scene.hasRigid()) rigid_ = buildRigidWorlds(scene, options).desc;
    sim_ = std::make_unique<Simulation>(device, cloth_ ? &*cloth_ : nullptr, scene.cloth.solver,
                                        rigid_ ? &*rigid_ : nullptr, scene.rigid.solver,
                                        1.0 / scene.fps, scene.substeps, useGraphs);
  }
  void advanceFrame() override { sim_->advanceFrame(); }
  double lastFrameMs() const override { return sim_->lastFrameMs(); }
  void resetGraphs() override { sim_->resetGraphs(); }
  void launchSubstep(int substepInFrame) override { sim_->launchSubstep(substepInFrame); }
  void setListReuse(bool enabled) override {
    if (sim_->hasCloth()) sim_->cloth().solver().setListReuse(enabled);
  }
  long long lastFrameContacts() const override {
    long long contacts = 0;
    if (sim_->hasCloth() && scene_.cloth.solver.selfContact.enabled) {
      // Candidate pairs summed over the frame's detections; with kept lists only the detections
      // that built lists counted theirs, so scale to every detection.
      const ClothPart& cloth = sim_->cloth();
      const ContactStatus& s = cloth.contactReport().lastFrame;
      if (s.listBuilds > 0) contacts += s.totalPairs * cloth.detectionsPerFrame() / s.listBuilds;
    }
    if (sim_->hasRigid()) contacts += sim_->rigid().contactReport().lastFrameRows;
    return contacts;
  }
  bool measuresDensestFrame() const override {
    return sim_->hasCloth() && scene_.cloth.solver.selfContact.enabled;
  }
  std::string sizeLabel() const override {
    std::string label;
    if (cloth_) label = std::to_string(cloth_->numParticles()) + " particles";
    if (rigid_)
      label += (label.empty() ? "" : ", ") + std::to_string(rigid_->numBodies()) + " bodies";
    return label;
  }
  int elementCount() const override {
    return (cloth_ ? cloth_->numParticles() : 0) + (rigid_ ? rigid_->numBodies() : 0);
  }
  int iterations() const override {
    return sim_->hasCloth() ? scene_.cloth.solver.iterations : scene_.rigid.solver.iterations;
  }
  int substepsPerFrame() const override { return sim_->substepsPerFrame(); }
  bool iteratesPerWorld() const override {
    return sim_->hasRigid() && sim_->rigid().solver().iteratesPerWorld();
  }
  std::vector<std::string> regrowths() const override { return sim_->regrowths(); }
  void carryCapacitiesInto(Scene& scene) const override {
    if (sim_->hasCloth() && scene.cloth.solver.selfContact.enabled) {
      const ClothPart::ContactReport& r = sim_->cloth().contactReport();
      SelfContactOptions& sc = scene.cloth.solver.selfContact;
      sc.vertexTriangleCapacity = std::max(sc.vertexTriangleCapacity, r.vertexTriangleCapacity);
      sc.edgeEdgeCapacity = std::max(sc.edgeEdgeCapacity, r.edgeEdgeCapacity);
      sc.triangleVertexCapacity = std::max(sc.triangleVertexCapacity, r.triangleVertexCapacity);
    }
    if (sim_->hasRigid()) {
      const RigidPart::ContactReport& r = sim_->rigid().contactReport();
      RigidSolverOptions& o = scene.rigid.solver;
      const int shapes = std::max(rigid_->numShapes(), 1);
      // The rows are max(256, contactCapacity x shapes) (solver/rigid_model.cpp).
      o.contactCapacity = std::max(o.contactCapacity, (r.rowCapacity + shapes - 1) / shapes);
      o.pairCapacity = std::max(o.pairCapacity, r.pairCapacity);
    }
  }

 private:
  const Scene& scene_;
  std::optional<ModelDesc> cloth_;
  std::optional<RigidDesc> rigid_;
  std::unique_ptr<Simulation> sim_;
};

}  // namespace

std::unique_ptr<SceneRunner> makeSceneRunner(const Device& device, const Scene& scene,
                                             const SceneOptions& options, bool useGraphs) {
  return std::make_unique<SimulationRunner>(device, scene, options, useGraphs);
}

}  // namespace weft
