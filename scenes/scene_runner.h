// SceneRunner: a scene built and its Simulation, for the code that only advances frames, times
// them and records launches — weft bench, the Google benchmarks and the tuner. weft run talks to
// the simulation directly, since it reads and checks its state.
#pragma once

#include <memory>
#include <string>

#include "scenes/scene.h"

namespace weft {

class SceneRunner {
 public:
  virtual ~SceneRunner() = default;
  /// Runs one frame (one CUDA graph replay on CUDA) and waits for it.
  virtual void advanceFrame() = 0;
  /// Device time of the last frame [ms].
  virtual double lastFrameMs() const = 0;
  /// Forgets captured graphs (after the launch policy changed).
  virtual void resetGraphs() = 0;
  /// Launches substep `substepInFrame` of a frame directly (no wait): what one records or
  /// captures as "a substep". Cable scenes detect contacts in the substeps that start a
  /// collision interval only.
  virtual void launchSubstep(int substepInFrame) = 0;
  /// Whether self-contact detections may keep their candidate lists (SelfContactOptions::
  /// reuseSlack; on by default). The tuner turns it off while it records a substep, so that every
  /// detection launch it times does its full work.
  virtual void setListReuse(bool) {}
  /// Contacts of the last frame: self-contact candidate pairs summed over its detections (cloth;
  /// with kept lists, scaled from the detections that built lists to all of them), the largest
  /// contact row count of a detection (cables); 0 without contacts.
  virtual long long lastFrameContacts() const = 0;
  /// True when the tuner and the benchmarks measure the densest-contact frame of the warm-up
  /// window (cloth with self-contact); false: the last frame of the window (settled cables).
  virtual bool measuresDensestFrame() const = 0;
  /// "1820 particles" or "4000 bodies".
  virtual std::string sizeLabel() const = 0;
  virtual int elementCount() const = 0;  // particles or bodies
  virtual int iterations() const = 0;
  virtual int substepsPerFrame() const = 0;
  /// Whether the cable solver runs a substep's iterations in one launch per world
  /// (IterationLaunches, solver/rigid_model.h).
  virtual bool iteratesPerWorld() const = 0;
  /// What grew so far ("frame 12: vertex-triangle 16 -> 40 (frame run again)"), oldest first.
  virtual std::vector<std::string> regrowths() const = 0;
  /// Raises `scene`'s initial contact capacities to what this run has grown to, so that a run of
  /// that scene over the same frames never grows (nor reallocates what a DeviceSnapshot holds).
  virtual void carryCapacitiesInto(Scene& scene) const = 0;
};

/// Builds `scene` with `options` and its simulation on `device`.
std::unique_ptr<SceneRunner> makeSceneRunner(const Device& device, const Scene& scene,
                                             const SceneOptions& options = {},
                                             bool useGraphs = true);

}  // namespace weft
