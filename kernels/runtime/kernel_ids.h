// Every kernel of Weft, declared once.
//
// WEFT_KERNELS(X) is the single list: X(name, kind). From it come the KernelId enum, the string
// names used as keys in launch tables, reports and debug logs, and the kind of launch:
//   Elementwise: one thread per item; the table gives the CUDA block size (8..1024).
//   Tile:        one cooperative tile per item that sums the item's parts; the table gives the
//                tile size (1, or 8..256). Tiles of up to 32 lanes are packed several to a block
//                (kernels/runtime/launch_cuda.cuh); larger tiles are one block each.
//   Group:       a group of lanes inside one warp per item, cooperating through ballots and
//                group-shared memory (a BVH query walked by several lanes); the table gives the
//                lanes per item (1..32); blocks hold kGroupBlockThreads threads.
// Names follow the reference solver (Newton SolverVBD) where a reference kernel exists; new
// kernels get new names. Add a kernel here and nowhere else.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/runtime/platform.h"

namespace weft {

enum class LaunchKind { Elementwise, Tile, Group };

// clang-format off
#define WEFT_KERNELS(X)                                                                          \
  /* kinematic shapes and driven particles: poses from simulation time (new) */                  \
  X(update_kinematics, Elementwise)                                                              \
  /* particle-shape contact generation, once per substep (reference: CollisionPipeline) */       \
  X(generate_particle_shape_contacts, Elementwise)                                               \
  /* cloth VBD (reference names) */                                                             \
  X(forward_step, Elementwise)                                                                   \
  X(solve_elasticity, Elementwise)                                                               \
  X(solve_elasticity_tile, Tile)                                                                 \
  /* the tile solve with the color's self-contact gathered in the same tile (new) */             \
  X(solve_elasticity_self_contact_tile, Tile)                                                    \
  X(apply_truncation_ts, Elementwise)                                                            \
  X(update_velocity, Elementwise)                                                                \
  /* LBVH over triangles and edges: leaf boxes (reference names), build and refit (new) */       \
  X(compute_tri_aabbs, Elementwise)                                                              \
  X(compute_edge_aabbs, Elementwise)                                                             \
  X(lbvh_scene_bounds, Elementwise)                                                              \
  X(lbvh_morton_codes, Elementwise)                                                              \
  X(lbvh_build_hierarchy, Elementwise)                                                           \
  X(lbvh_escape_indices, Elementwise)                                                            \
  X(lbvh_refit_leaves, Group)                                                                    \
  X(lbvh_refit_nodes, Group)                                                                     \
  /* self-contact detection: shared-memory stack traversal (reference) or stackless (new) */     \
  X(vertex_triangle_collision_detection, Elementwise)                                           \
  X(vertex_triangle_collision_detection_stackless, Elementwise)                                 \
  X(edge_colliding_edges_detection, Elementwise)                                                 \
  X(edge_colliding_edges_detection_stackless, Elementwise)                                       \
  /* ... and the cooperative traversal: a group of lanes walks one query's tree (new) */        \
  X(vertex_triangle_collision_detection_cooperative, Group)                                      \
  X(edge_colliding_edges_detection_cooperative, Group)                                           \
  X(collect_triangle_colliding_vertices, Elementwise)                                            \
  X(sort_triangle_colliding_vertices, Elementwise)                                               \
  /* whether the lists may be kept: particles within the slack since they were found (new) */  \
  X(measure_list_drift, Elementwise)                                                             \
  /* self-contact forces (reference name) */                                                     \
  X(accumulate_self_contact_force_and_hessian, Tile)                                             \
  /* each particle's self-contact pairs as one list, once per detection (new) */                \
  X(count_particle_self_contacts, Elementwise)                                                   \
  X(write_particle_self_contacts, Elementwise)                                                   \
  /* the penetration-free truncation over those records, one thread per pair (new) */           \
  X(apply_planar_truncation_by_record, Elementwise)                                              \
  /* rigid contacts: shape boxes, body-body lists (reference names); LBVH pairs, */              \
  /* partner lists kept while shapes stay in their boxes, analytic narrow phase, lists (new) */ \
  X(compute_shape_aabbs, Elementwise)                                                            \
  X(refresh_shape_pair_boxes, Elementwise)                                                       \
  X(rigid_broad_phase, Elementwise)                                                              \
  X(rigid_broad_phase_cooperative, Group)                                                        \
  X(rigid_broad_phase_all_pairs, Group)                                                          \
  X(rigid_broad_phase_all_pairs_runs, Group)                                                     \
  X(rigid_narrow_phase_count, Group)                                                             \
  X(rigid_narrow_phase, Group)                                                                   \
  X(fill_body_body_contact_lists, Elementwise)                                                   \
  X(sort_body_body_contact_lists, Elementwise)                                                   \
  /* contact matching across detections: latest match and sticky replay (reference's */        \
  /* contact_matching="sticky"; deterministic claim instead of its atomic_min race) */           \
  X(match_rigid_contacts, Elementwise)                                                           \
  X(replay_sticky_contacts, Elementwise)                                                         \
  /* rigid AVBD, compliant ALM: the reference's per-step, per-iteration and end-of-step */     \
  /* kernels fused by data independence (kernels/avbd.cuh), the body solve as a tile (new) */  \
  X(begin_rigid_step, Elementwise)                                                               \
  X(solve_rigid_body_tile, Tile)                                                                 \
  X(solve_rigid_body_tile_folding_duals, Tile)                                                   \
  /* a substep's iterations of one world per group of lanes (new) */                             \
  X(solve_rigid_world_iterations, Group)                                                         \
  X(update_rigid_duals, Elementwise)                                                             \
  X(finish_rigid_step, Elementwise)                                                              \
  /* diagnostics: exact edge-triangle intersections of a mesh (new) */                           \
  X(count_edge_triangle_intersections, Elementwise)                                              \
  /* benchmarks: an empty kernel whose graph nodes measure the GPU's per-phase latency (new) */  \
  X(graph_node_latency_probe, Elementwise)
// clang-format on

enum class KernelId : int {
#define WEFT_KERNEL_ENUM(name, kind) name,
  WEFT_KERNELS(WEFT_KERNEL_ENUM)
#undef WEFT_KERNEL_ENUM
};

inline constexpr int kNumKernels = 0
#define WEFT_KERNEL_COUNT(name, kind) +1
    WEFT_KERNELS(WEFT_KERNEL_COUNT)
#undef WEFT_KERNEL_COUNT
    ;

/// The kernel's name as it appears in tables, reports and logs (e.g. "forward_step").
std::string_view kernelName(KernelId id);
/// Inverse of kernelName(); empty for an unknown name.
std::optional<KernelId> kernelFromName(std::string_view name);
constexpr LaunchKind launchKindOf(KernelId id) {
  switch (id) {
#define WEFT_KERNEL_KIND(name, kind) \
  case KernelId::name:               \
    return LaunchKind::kind;
    WEFT_KERNELS(WEFT_KERNEL_KIND)
#undef WEFT_KERNEL_KIND
  }
  return LaunchKind::Elementwise;
}
inline LaunchKind launchKind(KernelId id) {
  return launchKindOf(id);
}
/// All kernel ids in declaration order.
const std::array<KernelId, kNumKernels>& allKernels();

/// Block sizes a table may give an elementwise kernel, tile sizes a tile kernel may use and
/// lanes per item of a group kernel (each tile and group size is instantiated in
/// kernels/runtime/launch_cuda.cuh).
inline constexpr std::array<int, 8> kBlockSizes = {8, 16, 32, 64, 128, 256, 512, 1024};
inline constexpr std::array<int, 7> kTileSizes = {1, 8, 16, 32, 64, 128, 256};
inline constexpr std::array<int, 6> kGroupSizes = {1, 2, 4, 8, 16, 32};
/// Threads per block of a group kernel (kGroupBlockThreads / lanes items per block).
inline constexpr int kGroupBlockThreads = 128;
/// Blocks of a group launch at most (launch_cuda.cuh, GroupsBody: a group then serves several
/// items): about eight waves of a full H100 (132 SMs × 16 blocks of 128 threads). A launch of
/// millions of items whose work is mostly a flag read (a detection that keeps its lists, a refit
/// that is not due) otherwise starts and retires a thread per lane of every item
/// (docs/PERFORMANCE.md, "group launches with a bounded grid").
inline constexpr int kMaxGroupBlocks = 16384;
/// Threads per block of a tile kernel whose tiles have at most 32 lanes (several tiles a block).
inline constexpr int kTileBlockThreads = 128;
/// A tile of one lane keeps one partial sum per level of its tree (launch_cuda.cuh, TilesBody<1>)
/// in shared memory. A tile kernel may lend it global memory for the levels from its
/// `kOneLaneSharedLevels` on (launch.h, Tile shape: `kOneLaneSharedLevels`, `oneLaneSpill`):
/// then every tile reserves only these levels' shared memory, and more blocks fit an SM while
/// most items, whose few parts never reach a deeper level, touch no global memory for the tree
/// (docs/PERFORMANCE.md, "The one-lane tile's deep levels in global memory").
/// Levels a one-lane tile stores for items of at most `maxParts` parts: log2 of the padded
/// width (the root is never stored).
WEFT_HD constexpr int oneLaneLevels(int maxParts) {
  int levels = 0;
  while ((1 << levels) < maxParts) ++levels;
  return levels;
}
/// Words of global memory a one-lane launch of `items` items needs for its levels beyond the
/// first `sharedLevels` (OneLaneSpill), parts of `partWords` words: 0 when the tree fits.
WEFT_HD constexpr size_t oneLaneSpillWords(int maxParts, int items, size_t partWords,
                                           int sharedLevels) {
  const int deep = oneLaneLevels(maxParts) - sharedLevels;
  return deep > 0 ? size_t(deep) * partWords * size_t(items) : 0;
}
/// Global memory for the levels of one-lane tiles from the kernel's shared levels S on: word w
/// of level S + d of item i at (d · words per part + w) · items + i, for the launch's items.
/// Used only when `words` holds them all (capacityWords); otherwise every level stays in shared
/// memory. Where a level is kept changes no bit of the sum.
struct OneLaneSpill {
  unsigned* words = nullptr;
  size_t capacityWords = 0;
};
bool isValidLaunchSize(KernelId id, int size);
/// The sizes a table may give kernel `id` (by its launch kind), in increasing order.
std::span<const int> launchSizes(KernelId id);
/// "tile size (8, 16, 32, 64, 128, 256)", "block size (...)" or "lanes per item (...)".
std::string validLaunchSizesText(KernelId id);

}  // namespace weft
