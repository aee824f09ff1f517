// RigidModel / RigidState / RigidScratch: the data of the rigid (cable) AVBD path, split as the
// cloth side's Model / State / Scratch (docs/ARCHITECTURE.md).
//
//   RigidModel    immutable after upload: bodies (effective mass and inertia: zero for kinematic
//                 bodies), their motions, shapes, joints with their cached rest strain, the body
//                 coloring by joints and the body → joint adjacency.
//   RigidState    what evolves and what a user reads: body poses and velocities, the substep
//                 counter (simulation time = substep·dt, read by kinematic motion).
//   RigidScratch  per-step work memory: start-of-step, inertial and second iterate poses, joint
//                 step terms and multipliers, Dahl state, the contact detector, per-row contact
//                 state and the previous detection (contact history).
// Everything is allocated before the first step; a step allocates nothing and can be captured in
// a CUDA graph. Contact rows grow between frames (RigidPart, Simulation) and never drop silently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collision/rigid_contacts.h"
#include "kernels/avbd.cuh"
#include "kernels/runtime/buffer.h"
#include "solver/rigid_desc.h"

namespace weft {

/// How many levels of their summation tree the body solve's one-lane tiles (tile size 1: large
/// batches) keep in shared memory; the deeper ones go to global memory (kernel_ids.h
/// OneLaneSpill; docs/PERFORMANCE.md, "The one-lane tile's deep levels in global memory"). The
/// bits are the same in every mode.
enum class OneLaneLevels {
  Auto,   // Three at first (Two when the model has no contacts at all); Two after a frame whose
          // largest detection had at most one contact row per 8 bodies, Three again after one
          // with more than one row per 4
  Three,  // three levels, no register cap: twelve warps an SM; for bodies with many contact rows
          // (a body of at most eight parts never touches global memory for its tree)
  Two,    // two levels and 128 registers a thread: sixteen warps an SM; for bodies with at most
          // four parts (inertia, joints, contact runs), whose tree never reaches a deep level
};

/// How a substep's iterations are launched (docs/PERFORMANCE.md, "A substep's iterations per
/// world"). The bits are the same either way, on both backends (cable_worlds_test).
enum class IterationLaunches {
  Auto,      // PerWorld on CUDA for batches of small worlds (at most 32 bodies of a color
             // each) from 128 worlds on (SolverAVBD::choosesWorldLaunch); PerColor otherwise
  PerColor,  // a launch per color and iteration (solve_rigid_body_tile), the dual step per
             // iteration in a launch of its own or folded into the next one
  PerWorld,  // one launch for all iterations, a group of lanes per world
             // (solve_rigid_world_iterations)
};

/// Settings of the rigid AVBD solver (rigid_avbd_spec §2; compliant ALM only).
struct RigidSolverOptions {
  int iterations = 5;                // Gauss–Seidel sweeps over the body colors per substep
  Vec3 gravity{0.0f, 0.0f, -9.81f};  // [m/s²]
  float frictionEpsilon = 1e-2f;     // [m/s]; ε_u = frictionEpsilon·dt
  float gamma = 0.999f;              // per-step retention of the multipliers (rigid_avbd_gamma)
  float jointAlpha = 0.0f;           // stabilization α of joint rows (ALM default 0)
  float contactAlpha = 0.0f;         // stabilization α of contact rows (ALM default 0)
  int collideInterval = 1;           // contacts generated every n-th substep (the reference's
                                     // update_step_interval: 1, or 10 for twist and bundle);
                                     // must divide the substeps of a frame
  int contactCapacity = 4;           // initial contact rows per shape (at least 256 in all;
                                     // grown on demand, never dropped)
  int pairCapacity = 16;             // initial broad-phase partners per shape (grown on demand)
  float pairReuseMargin = 0.007f;    // [m] the partner lists of the first detection of a frame
                                     // are kept by the frame's later detections while every
                                     // shape stays within this distance of its box at list
                                     // time (decided on the device; the same rows as fresh
                                     // lists; with the shape tree only). 0: the broad phase
                                     // runs at every detection
  int allPairsShapes = 512;          // at most this many non-plane shapes: every box against
                                     // every box instead of the shape tree (same pairs)
  int foldDualsUpToBodies = 128;     // models (all worlds) of at most this many bodies take
                                     // the dual step between iterations in the next iteration's
                                     // first color launch (kernels/avbd.cuh FoldedDuals; the
                                     // same bits either way, on both backends); larger ones in
                                     // a launch of its own. 0: never folded
  bool contactHistory = false;       // warm-start λ of rows matched to the previous detection
  bool stickyContacts = false;       // matched penetrating rows keep their previous anchors
  float matchDistance = 5e-4f;       // [m] contact_matching_pos_threshold
  float matchNormalDot = 0.995f;     // contact_matching_normal_dot_threshold
  float chebyshevRho = 0.0f;         // Chebyshev semi-iterative acceleration of the sweeps
                                     // (kernels/avbd.cuh, SolveRigidBodyTileT::chebyshevOmega):
                                     // an estimate of the sweeps' spectral radius in [0, 1);
                                     // 0 (the default, as the reference): off. Weft's cable
                                     // scenes use kCableSceneChebyshevRho (scenes/scene.h;
                                     // docs/CONVERGENCE.md)
  bool recordConvergence = false;    // record every iteration's largest body step (the
                                     // block-Newton increments |Δx|, |Δθ|; RigidPart's
                                     // convergence report): an atomic per body and color
  OneLaneLevels oneLaneLevels = OneLaneLevels::Auto;              // see OneLaneLevels
  IterationLaunches iterationLaunches = IterationLaunches::Auto;  // see IterationLaunches
  int rowSlotItems = 1 << 19;  // begin_rigid_step and update_rigid_duals serve the contact-row
                               // slots (the row capacity) with at least this many threads, each
                               // taking every n-th slot (kernels/avbd.cuh rowSlotStride), so that
                               // a capacity sized for the most contacts launches no thread per
                               // empty slot; 2^19 is about twice what an H100 keeps resident.
                               // The same bits for any value ≥ 1
  /// Batches of at least this many worlds that take all pairs (allPairsShapes): a group of lanes
  /// per run of 32 of a world's shapes, the boxes staged in group memory, instead of one per
  /// shape (the same pairs; the faster from 1024 y_junction worlds on, on the H100:
  /// docs/PERFORMANCE.md, "The all-pairs broad phase by runs of a world's shapes").
  int allPairsRunsFromWorlds = 1024;
  /// Models (all worlds) of at most this many bodies run the step's beginning for their bodies
  /// and joints beside each detection, on the device's side stream (SolverAVBD::beginStep; the
  /// same bits either way); larger ones after it, in the launch of the rows. It paid for the
  /// single y_junction only (docs/PERFORMANCE.md, "The step's beginning beside the detection").
  /// 0: never.
  int beginBesideDetectionUpToBodies = 128;
  /// Models whose worlds have at most this many bodies of a color, and that have contacts: from
  /// the second iteration on, each joint's dual step of the iteration before is taken inside the
  /// block of its end of the earlier color (or of its only dynamic end), which shares the frames
  /// and the strain with it, instead of in the dual launch or pass (kernels/avbd.cuh,
  /// SolveRigidBodyTileT::jointPart; their launches per color run that variant of the body
  /// solve under its names and launch sizes, its one-lane tiles with three levels whatever
  /// oneLaneLevels says). The same values (on the CPU the same bits); it pays for small worlds
  /// (docs/PERFORMANCE.md). 0: never.
  int jointDualsInBlocksUpToWorldColor = 32;

  /// Throws weft::Error naming the first invalid field.
  void validate() const;
};

class RigidModel {
 public:
  RigidModel(const Device& device, const RigidDesc& desc);

  int numBodies = 0, numShapes = 0, numJoints = 0, numColors = 0;
  bool hasDahl = false;  // some ROD joint has ε_max > 0, τ > 0 and bend or twist stiffness

  // Bodies
  WordMajorBuffer<Vec3> com;              // (numBodies) COM in the body frame [m]
  DeviceBuffer<float> mass;               // (numBodies) effective mass, 0 = kinematic [kg]
  DeviceBuffer<float> invMass;            // (numBodies) effective inverse mass [1/kg]
  WordMajorBuffer<Mat33> inertia;         // (numBodies) body frame, about the COM [kg·m²]
  DeviceBuffer<Mat33> invInertia;         // (numBodies) effective inverse [1/(kg·m²)]
  DeviceBuffer<float> structuralK;        // (numBodies) max stretch/shear k of its joints [N/m]
  DeviceBuffer<ShapeMotion> motion;       // (numBodies) kinematic motion (Static for others)
  DeviceBuffer<Transform> motionSamples;  // Sampled motions' poses, concatenated

  // Shapes
  DeviceBuffer<int> shapeBody;                  // (numShapes) −1 = static
  DeviceBuffer<ShapeGeometry> shapeGeometry;    // (numShapes)
  DeviceBuffer<Transform> shapeLocalPose;       // (numShapes) in the body frame
  DeviceBuffer<float> shapeMargin;              // (numShapes) [m]
  DeviceBuffer<float> shapeGap;                 // (numShapes) [m]
  DeviceBuffer<int> shapeWorld;                 // (numShapes) with several worlds; else empty
  int numWorlds = 1;                            // worlds never touch (RigidShapeDesc::world)
  DeviceBuffer<ContactMaterial> shapeMaterial;  // (numShapes)
  DeviceBuffer<std::uint64_t> filterKeys;       // sorted shapePairKey of filtered pairs
  DeviceBuffer<int> filterStarts;               // (numShapes + 1) shapePairFilterStarts

  // Joints
  DeviceBuffer<int> jointType, jointParent, jointChild;  // (numJoints)
  WordMajorBuffer<RodJoint> joints;                      // (numJoints) anchors, rest, material
  DeviceBuffer<float> dahlEpsMax, dahlTau;               // (numJoints)
  DeviceBuffer<int> jointOffsets;                        // (numBodies + 1)
  DeviceBuffer<int> bodyJoints;                          // (2 x numJoints at most)
  // bodyJoints with ~j where the body takes joint j's dual step in its block (kernels/avbd.cuh,
  // SolveRigidBodyTileT::jointPart; RigidSolverOptions::jointDualsInBlocksUpToWorldColor)
  DeviceBuffer<int> bodyJointsTakingDuals;
  bool jointDualsCanBeInBlocks = true;  // every joint has a dynamic end of a color of its own

  // Coloring by joints: colorBodies[colorOffsets[c] .. colorOffsets[c+1]) (host offsets)
  DeviceBuffer<int> colorBodies;  // (numBodies)
  DeviceBuffer<int> bodyColor;    // (numBodies) the color of each body
  std::vector<int> colorOffsets;  // (numColors + 1)
  int maxJointsPerBody = 0;       // the largest body → joint list

  // Worlds as ranges (RigidWorldsDevice, for solve_rigid_world_iterations): world w's bodies of
  // each color, its joints and its shapes. Empty when a model of several worlds does not say
  // where their bodies are (RigidDesc::worldBodyOffsets) or a color does not list them world by
  // world; worldsView() then throws.
  DeviceBuffer<int> worldColorOffsets;  // (numColors × (worldRanges + 1))
  DeviceBuffer<int> worldJointBegin;    // (worldRanges + 1)
  DeviceBuffer<int> worldShapeBegin;    // (worldRanges + 1)
  int worldRanges = 0;                  // worlds the arrays above describe (0: none)
  int largestWorldColor = 0;            // the most bodies of one color in one world

  RigidBodiesDevice bodiesView() const;
  RigidJointsDevice jointsView() const;
  RigidShapesView shapesView() const;
  RigidWorldsDevice worldsView() const;

 private:
  void uploadWorldRanges(const Device& device, const RigidDesc& desc);
};

/// The previous detection, which the next one is matched against (the contact history and the
/// sticky contacts): saved at the end of the substep before each detection, so it carries over
/// between substeps and frames. Empty when the model has no pair of shapes to test.
struct RigidContactHistory {
  DeviceBuffer<RigidContact> rows;        // (rowCapacity)
  DeviceBuffer<int> count;                // (1)
  DeviceBuffer<int> shapeOffsets;         // (numShapes + 1)
  DeviceBuffer<Vec3> midpoints;           // (rowCapacity) world midpoints at detection
  DeviceBuffer<RigidContactState> state;  // (rowCapacity)
};

/// Everything of a rigid model that carries over from one substep to the next (the work buffers,
/// RigidScratch, hold nothing that must survive a substep).
struct RigidState {
  RigidState(const Device& device, const RigidDesc& desc);

  DeviceBuffer<Transform> poses;                // (numBodies) body origin poses [m]
  DeviceBuffer<Vec3> linearVelocities;          // (numBodies) COM velocity [m/s]
  DeviceBuffer<Vec3> angularVelocities;         // (numBodies) world [rad/s]
  DeviceBuffer<long long> substep;              // (1) substeps completed since t = 0
  DeviceBuffer<Transform> startPoses;           // (numBodies) body_q_prev: start of the last step
  WordMajorBuffer<RodMultipliers> jointLambda;  // (numJoints) the joints' multipliers (warm start)
  DeviceBuffer<DahlState> dahl;                 // (numJoints) Dahl friction state
  RigidContactHistory history;                  // (allocated by RigidScratch with the detector)

  /// Every buffer above, for saving a frame's start (FrameDriver::carry).
  std::vector<BufferRange> carried();
};

struct RigidScratch {
  RigidScratch(const Device& device, const RigidModel& model, RigidState& state,
               const RigidSolverOptions& options);

  /// (Re)allocates the per-row arrays, and the state's contact history, for the detector's
  /// current row capacity, keeping the first rows of the previous detection and their state.
  void resizeRows(RigidState& state);

  const Device& device;
  WordMajorBuffer<Transform> inertialPoses;  // (numBodies) inertial target y
  DeviceBuffer<Transform> iteratePoses;      // (numBodies) the first iterate, then the
                                             // second pose buffer of the iterations
                                             // (kernels/avbd.cuh IteratePoses)
  WordMajorBuffer<RodStepTerms> jointTerms;  // (numJoints) per-step joint constants
  // The multipliers between iterations (kernels/avbd.cuh FoldedDuals): iteration i ≥ 1 writes
  // its new λ to [i % 2]; the last dual step writes jointLambda and contactState's λ again.
  WordMajorBuffer<RodMultipliers> jointLambdaIterates[2];  // (numJoints)
  DeviceBuffer<Vec3> contactLambdaIterates[2];             // (rowCapacity)
  // With recordConvergence: per substep of a frame and iteration, the largest |Δx| [m] and
  // |Δθ| [rad] of any body ((substeps × iterations × 2), allocated by RigidPart).
  DeviceBuffer<float> iterationSteps;
  // The body solve's one-lane tiles keep two tree levels in shared memory, not three
  // (OneLaneLevels::Two; RigidPart decides under Auto). On CUDA `oneLaneSpill` holds the deeper
  // levels of the largest color's bodies in either mode (kernel_ids.h OneLaneSpill); the CPU's
  // tiles need none.
  bool twoSharedLevels = false;
  DeviceBuffer<unsigned> oneLaneSpill;

  std::unique_ptr<RigidContactDetector> detector;  // null when the model has no pair to test
  int rowCapacity = 0;
  DeviceBuffer<RigidContactState> contactState;  // (rowCapacity) per current row
  // (2 x rowCapacity) the rows of the bodies' lists, as the body solve reads them; gathered by
  // the begin step after each detection (kernels/avbd.cuh GatherContactEnds), so they change
  // only with the detector's rows, which a frame's first substep always detects.
  DeviceBuffer<RigidContactEnd> contactEnds;
  DeviceBuffer<int> matchIndex;             // (rowCapacity) previous row or −1/−2
  DeviceBuffer<int> matchCandidate;         // (rowCapacity)
  DeviceBuffer<float> matchDistance;        // (rowCapacity)
  DeviceBuffer<Vec3> midpoints;             // (rowCapacity) world midpoints at detection
  DeviceBuffer<unsigned long long> claims;  // (rowCapacity)
};

}  // namespace weft
