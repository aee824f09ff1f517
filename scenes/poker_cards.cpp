// poker_cards: the reference's cloth_poker_cards (scenes_spec §1, Newton
// example_cloth_poker_cards.py). 52 stiff "cards" (coarse cloth with a high bending stiffness)
// drop 5 cm onto a static cube and stack; a kinematic sphere then sweeps through the pile at
// 0.5 m/s. Exercises dense, thin, layered self-contact (cards start 1 mm apart, contact radius
// 1 mm) together with cloth–box, cloth–sphere and cloth–ground contact.
//
// Counts: 52 cards × 4×6 cells = 1820 particles (all free), 2496 triangles, 4264 bending edges,
// 3 shapes (box, sphere, ground plane). Units m, kg, s; gravity (0, 0, −9.8).
// Settings, all the reference's: 60 fps, 20 substeps (dt = 1/1200 s), 10 iterations; card
// 63.5 × 88.9 mm, 1.8 g (uniform 1.8e-3/35 kg per particle), tri ke/ka 1e4, kd 1, edge ke 1e2,
// kd 1, particle radius 3 mm; coloring with bending; model soft contact ke 1e5, kd 1e2, mu 0.3
// (self-contact, and mixed with each shape's material: ke and kd arithmetic, mu geometric);
// shape contact margin 5 mm; self-contact radius 1 mm, margin 1.5 mm, detection interval 0,
// topological filter 2, no rest-shape exclusion, trees refit only. Shapes: cube half-extents
// 0.1 centred at (0, 0, 0.1) (ke 5e6, kd 1e4, mu 0.1); sphere r 0.02 from (−0.35, 0, 0.22)
// along +x at 0.5 m/s (ke 1e5, kd 10, mu 0.3); ground z = 0 (ke 1e5, kd 100, mu 0.3).
// The default 30 frames are the reference's test length; the sphere's front is then still
// about 4 cm short of the pile, so the test covers the drop and the stacking.
//
// Differences from the reference:
//   * The card offsets are a table (kCardOffsets), not a live RNG draw: they are NumPy
//     default_rng(42) (PCG64) uniform draws (ox, oy, a) per card, as listed in scenes_spec §1
//     to 9 decimals (checked against NumPy's own draws: they agree to 5e-10).
//   * The sphere's pose is computed on the device from the substep counter (ShapeMotion::Linear,
//     evaluated at the substep's end time k·dt, so substep k sees x = −0.35 + 0.5·k·dt exactly as
//     the reference's host-side update). The reference copies body_q to the host every substep
//     and therefore captures no graph; this scene is graph-captured like every other one.
//     The sphere's contact velocity comes from its start and end poses in the substep; the
//     reference derives it from its own previous-pose bookkeeping of the host-edited body_q. The
//     sphere touches no card within the default 30 frames.
//   * The reference's cube and sphere are zero-mass free bodies the rigid solver integrates
//     without effect; here they are a static and a kinematic shape (no rigid bodies, no gap).
//   * Self-contact candidate lists grow on demand instead of the fixed 32/64 buffers.
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "scenes/scene.h"
#include "solver/cloth_builder.h"

namespace weft {
namespace {

constexpr int kNumCards = 52;
constexpr int kCellsX = 4, kCellsY = 6;    // 5 × 7 = 35 particles per card
constexpr float kCardWidth = 0.0635f;      // [m] 2.5 in
constexpr float kCardHeight = 0.0889f;     // [m] 3.5 in
constexpr float kCardMass = 1.8e-3f;       // [kg]
constexpr float kParticleRadius = 0.003f;  // [m] against the shapes
constexpr float kCubeHalfSize = 0.1f;      // [m]
constexpr float kCubeCentreZ = 0.1f;       // [m]: the cube spans z in [0, 0.2]
constexpr float kDropHeight = kCubeCentreZ + kCubeHalfSize + 0.05f;  // [m] lowest card
constexpr float kCardSpacing = 0.001f;                               // [m] between cards
constexpr float kSphereRadius = 0.02f;                               // [m]
constexpr Vec3 kSphereStart{-0.35f, 0.0f, 0.22f};                    // [m]
constexpr float kSphereSpeed = 0.5f;                                 // [m/s] along +x

/// One card's random placement: corner offset and rotation about the corner.
struct CardOffset {
  float ox;     // [m]
  float oy;     // [m]
  float angle;  // [rad] about +z
};

// NumPy default_rng(42) (PCG64) draws ox = U(−0.005, 0.005), oy = U(−0.005, 0.005),
// a = U(−0.1, 0.1), in that order per card (scenes_spec §1 table; 9 decimals).
constexpr std::array<CardOffset, kNumCards> kCardOffsets = {{
    {0.002739560f, -0.000611216f, 0.071719584f},    // 0
    {0.001973680f, -0.004058227f, 0.095124470f},    // 1
    {0.002611397f, 0.002860643f, -0.074377273f},    // 2
    {-0.000496141f, -0.001292020f, 0.085352998f},   // 3
    {0.001438651f, 0.003227616f, -0.011317160f},    // 4
    {-0.002727613f, 0.000545848f, -0.087236549f},   // 5
    {0.003276312f, 0.001316644f, 0.051617548f},     // 6
    {-0.001454740f, 0.004706980f, 0.078624224f},    // 7
    {0.002783835f, -0.003053613f, -0.006655799f},   // 8
    {-0.004561962f, -0.003457105f, 0.036609791f},   // 9
    {0.002447622f, 0.004675097f, -0.034834928f},    // 10
    {-0.001295403f, -0.000304442f, -0.062105728f},  // 11
    {-0.003700785f, -0.000242951f, -0.054618130f},  // 12
    {0.001698140f, -0.000628481f, 0.066535639f},    // 13
    {0.002002651f, -0.001876334f, 0.066451960f},    // 14
    {0.003047644f, -0.001125216f, -0.042334379f},   // 15
    {0.001824955f, -0.003602475f, -0.060018360f},   // 16
    {-0.004926377f, 0.002869244f, 0.032970171f},    // 17
    {0.002051654f, 0.002807290f, -0.008216845f},    // 18
    {0.000687412f, -0.003602030f, -0.077093985f},   // 19
    {0.001684030f, -0.000289038f, 0.013047221f},    // 20
    {0.002649989f, 0.001347183f, 0.010715880f},     // 21
    {0.000592072f, -0.001960499f, -0.093836433f},   // 22
    {-0.000632826f, -0.002854153f, -0.018294271f},  // 23
    {0.003534031f, -0.002660605f, -0.088339452f},   // 24
    {-0.002186161f, -0.002064062f, 0.032383303f},   // 25
    {0.000570322f, 0.002838982f, 0.032862708f},     // 26
    {-0.000936131f, 0.003140204f, -0.066605416f},   // 27
    {-0.004772879f, -0.004099521f, 0.044471870f},   // 28
    {-0.000381228f, -0.003387282f, 0.000208955f},   // 29
    {-0.003476879f, 0.001963204f, -0.010768745f},   // 30
    {-0.001189788f, -0.001984879f, 0.026056519f},   // 31
    {-0.001381874f, -0.004123501f, -0.076398820f},  // 32
    {0.004618977f, 0.004085807f, 0.039941427f},     // 33
    {-0.002341300f, 0.004691764f, 0.055750181f},    // 34
    {0.002168902f, -0.000506385f, -0.045551688f},   // 35
    {-0.004036090f, 0.004026024f, -0.008844742f},   // 36
    {-0.002976366f, -0.001940434f, 0.015843914f},   // 37
    {-0.003232272f, 0.003566143f, 0.051703906f},    // 38
    {0.002194630f, -0.000679070f, 0.025461768f},    // 39
    {0.000840980f, 0.001498466f, -0.083111136f},    // 40
    {-0.000841926f, -0.004583858f, -0.001201836f},  // 41
    {-0.001701388f, -0.003554758f, -0.079319406f},  // 42
    {0.000876446f, -0.003294070f, 0.085024024f},    // 43
    {0.000810611f, -0.001531302f, 0.018183098f},    // 44
    {-0.004771961f, 0.004585592f, -0.003539313f},   // 45
    {0.002827352f, -0.004172700f, -0.002668334f},   // 46
    {-0.000092930f, 0.004378265f, 0.014345610f},    // 47
    {-0.000265106f, -0.002330243f, -0.033686201f},  // 48
    {0.000206724f, -0.000610885f, -0.095677584f},   // 49
    {0.003262919f, 0.003961608f, -0.071950182f},    // 50
    {0.000540361f, -0.003914243f, 0.034448019f},    // 51
}};

ModelDesc buildPokerCards(const SceneOptions& options) {
  sceneOption(options, "", 0.0, {});  // rejects any --scene-option: this scene has none
  ClothBuilder builder;

  // Shapes in the reference's order: cube (shape 0), sphere (1), ground (2).
  ShapeDesc cube;
  cube.name = "cube";
  cube.geometry.type = ShapeType::Box;
  cube.geometry.halfExtents = {kCubeHalfSize, kCubeHalfSize, kCubeHalfSize};
  cube.material = {5.0e6f, 1.0e4f, 0.1f};
  cube.motion.pose0.p = {0.0f, 0.0f, kCubeCentreZ};
  builder.addShape(cube);

  ShapeDesc sphere;
  sphere.name = "sphere";
  sphere.geometry.type = ShapeType::Sphere;
  sphere.geometry.radius = kSphereRadius;
  sphere.material = {1.0e5f, 1.0e1f, 0.3f};
  sphere.motion.type = MotionType::Linear;  // never stops
  sphere.motion.pose0.p = kSphereStart;
  sphere.motion.linearVelocity = {kSphereSpeed, 0.0f, 0.0f};
  builder.addShape(sphere);

  ShapeDesc ground;
  ground.name = "ground";
  ground.geometry.type = ShapeType::Plane;
  ground.material = {1.0e5f, 1.0e2f, 0.3f};
  builder.addShape(ground);

  // Card i: vertex (0, 0) at the corner origin, rotated by R_z(a) about that corner.
  for (int i = 0; i < kNumCards; ++i) {
    const CardOffset& offset = kCardOffsets[size_t(i)];
    ClothGridParams card;
    card.position = {-0.5f * kCardWidth + offset.ox, -0.5f * kCardHeight + offset.oy,
                     kDropHeight + float(i) * kCardSpacing};
    card.rotation = quatFromAxisAngle({0.0f, 0.0f, 1.0f}, offset.angle);
    card.dimX = kCellsX;
    card.dimY = kCellsY;
    card.cellX = kCardWidth / kCellsX;
    card.cellY = kCardHeight / kCellsY;
    card.mass = kCardMass / float((kCellsX + 1) * (kCellsY + 1));
    card.triangleMaterial = {1.0e4f, 1.0e4f, 1.0f};
    card.edgeMaterial = {1.0e2f, 1.0f};
    card.particleRadius = kParticleRadius;
    builder.addClothGrid(card);
  }

  ColoringOptions coloring;
  coloring.includeBending = true;
  return builder.finalize(coloring);
}

std::string format(const char* fmt, double value) {
  char buffer[160];
  std::snprintf(buffer, sizeof(buffer), fmt, value);
  return buffer;
}

// The reference's test_final, each translated with its strict inequality.

/// Largest particle speed (vector norm) < 0.5 m/s: the cards have settled.
CheckResult checkMaxSpeed(const CheckInput& in) {
  constexpr float kLimit = 0.5f;  // [m/s]
  float fastest = 0.0f;
  for (const Vec3& v : in.velocities) fastest = std::fmax(fastest, length(v));
  return {"max_speed", fastest < kLimit, format("max speed %.4g m/s (limit < 0.5)", fastest)};
}

/// Diagonal of the particles' bounding box < 2 m: nothing exploded.
CheckResult checkBoxDiagonal(const CheckInput& in) {
  Vec3 lower{1e30f, 1e30f, 1e30f}, upper{-1e30f, -1e30f, -1e30f};
  for (const Vec3& x : in.positions) {
    lower = {std::fmin(lower.x, x.x), std::fmin(lower.y, x.y), std::fmin(lower.z, x.z)};
    upper = {std::fmax(upper.x, x.x), std::fmax(upper.y, x.y), std::fmax(upper.z, x.z)};
  }
  const float diagonal = length(upper - lower);
  return {"bbox_diagonal", diagonal < 2.0f,
          format("particle bounding-box diagonal %.4g m (limit < 2)", diagonal)};
}

/// Lowest particle z > −0.1 m: no gross fall through the ground.
CheckResult checkMinZ(const CheckInput& in) {
  float lowest = 1e30f;
  for (const Vec3& x : in.positions) lowest = std::fmin(lowest, x.z);
  return {"min_z", lowest > -0.1f, format("lowest particle z = %.4g m (limit > -0.1)", lowest)};
}

/// No particle centre inside the cube (the table the cards rest on). A resting card's contact
/// sphere sinks by weight/ke ~ 1e-8 m into the cube (ke 2.55e6 N/m mixed), so a centre below
/// the surface, a penetration of more than the whole 3 mm radius, can only be a tunnelled card.
CheckResult checkOutsideCube(const CheckInput& in) {
  const Vec3 centre{0.0f, 0.0f, kCubeCentreZ};
  float deepest = -1e30f;  // largest depth of a centre below the cube's surface [m]
  int inside = 0;
  for (const Vec3& x : in.positions) {
    const Vec3 d = x - centre;
    const float depth =
        std::fmin(std::fmin(kCubeHalfSize - std::fabs(d.x), kCubeHalfSize - std::fabs(d.y)),
                  kCubeHalfSize - std::fabs(d.z));
    deepest = std::fmax(deepest, depth);
    inside += depth > 0.0f;
  }
  return {"outside_cube", inside == 0,
          inside == 0 ? "no particle centre inside the cube"
                      : std::to_string(inside) + " particle centres inside the cube, deepest " +
                            format("%.3g m below its surface", deepest)};
}

std::vector<CheckResult> checkPokerCards(const CheckInput& in) {
  // Ground: the same reasoning as the cube; a centre may touch the plane but not cross it.
  return {checkFinite(in),
          checkMaxSpeed(in),
          checkBoxDiagonal(in),
          checkMinZ(in),
          checkAboveGround(in, 0.0f, 0.0f),
          checkOutsideCube(in)};
}

}  // namespace

Scene makePokerCardsScene() {
  Scene scene;
  scene.name = "poker_cards";
  scene.benchmark = true;       // one of the reference's eight benchmark scenes
  scene.benchWindowFirst = 30;  // weft bench's window, frames [30, 40)
  scene.benchWindowEnd = 40;
  scene.aliases = {"poker", "cloth_poker_cards"};
  scene.description =
      "52 stiff 4x6-cell cards drop onto a box and stack; a kinematic sphere sweeps in at 0.5 m/s "
      "(layered self-contact)";
  scene.fps = 60.0;
  scene.substeps = 20;
  scene.defaultFrames = 30;  // the reference's test length
  scene.cloth.checksSelfIntersections = true;
  SolverOptions& o = scene.cloth.solver;
  o.iterations = 10;
  o.gravity = {0.0f, 0.0f, -9.8f};
  o.particleContact = {1.0e5f, 1.0e2f, 0.3f};  // model soft_contact_ke / kd / mu
  o.shapeContactMargin = 0.005f;               // CollisionPipeline soft_contact_margin
  o.selfContact.enabled = true;
  o.selfContact.radius = 0.001f;
  o.selfContact.margin = 0.0015f;
  o.selfContact.detectionInterval = 0;
  o.selfContact.topologicalFilter = 2;
  o.selfContact.restExclusion = 0.0f;
  o.selfContact.bvhRebuildInterval = 0;  // the reference never rebuilds (refit only)
  scene.cloth.build = buildPokerCards;
  scene.cloth.checks = checkPokerCards;
  return scene;
}

}  // namespace weft
