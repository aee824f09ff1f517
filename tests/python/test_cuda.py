"""The weft module on CUDA: the same model on both backends, and device views without copies.
Skipped (with the reason) where no GPU is visible; run on the GPU machine before resolving work
that touches the module."""
import numpy as np
import pytest

import weft

pytestmark = pytest.mark.skipif(weft.cuda_devices() == 0,
                                reason="no CUDA GPU visible: " + weft.cuda_unavailable_reason())


def draped_cloth():
    builder = weft.ClothBuilder()
    builder.add_cloth_grid(weft.ClothGrid(position=(-0.4, -0.4, 0.35), dim_x=12, dim_y=12,
                                          cell_x=0.8 / 12, cell_y=0.8 / 12, mass=0.01,
                                          particle_radius=0.01,
                                          edge_material=weft.EdgeMaterial(ke=0.01)))
    builder.add_shape(weft.sphere(0.3, material=weft.ContactMaterial(ke=1e4, kd=10.0, mu=0.5)))
    return builder.finalize()


def test_gpu_matches_cpu():
    """A cloth held at one edge swinging down and a hanging Y-shaped rod graph (cable_y_junction),
    20 frames on each backend: the same motion, the cloth to 0.1 mm and the stiff rods to 1 mm (the
    bound of the C++ suites' CudaAgreesWithCpu; 0.17 mm measured on the H100). Smooth motions:
    where contact and friction make the motion chaotic (a cloth sliding on a sphere), float
    rounding grows to millimetres over such a run."""
    builder = weft.ClothBuilder()
    builder.add_cloth_grid(weft.ClothGrid(dim_x=12, dim_y=12, cell_x=0.05, cell_y=0.05,
                                          fix_left=True))
    cloth = builder.finalize()
    runs = {}
    for device in ("cpu", "cuda"):
        sim = weft.Simulation(cloth=cloth, device=device)
        cables = weft.Simulation.from_scene("cable_y_junction", device=device)
        assert sim.device.is_cuda == (device == "cuda")
        sim.step(20)
        cables.step(20)
        runs[device] = (sim.positions, cables.poses)
    np.testing.assert_allclose(runs["cuda"][0], runs["cpu"][0], atol=1e-4)
    np.testing.assert_allclose(runs["cuda"][1], runs["cpu"][1], atol=1e-3)
    assert runs["cuda"][0][:, 2].min() < -0.3  # the cloth swung down


def test_cuda_views_are_device_memory_without_copies():
    torch = pytest.importorskip("torch")
    sim = weft.Simulation(cloth=draped_cloth(), device="cuda")
    view = torch.from_dlpack(sim.positions_view())
    assert view.is_cuda and tuple(view.shape) == (169, 3) and view.dtype == torch.float32
    np.testing.assert_array_equal(view.cpu().numpy(), sim.positions)
    view[:, 2] += 1.0  # written on the device, seen by the simulation
    torch.cuda.synchronize()
    np.testing.assert_array_equal(sim.positions, view.cpu().numpy())
    sim.step(2)
    np.testing.assert_array_equal(view.cpu().numpy(), sim.positions)  # the view follows the state
    velocities = torch.from_dlpack(sim.velocities_view())
    np.testing.assert_array_equal(velocities.cpu().numpy(), sim.velocities)


def test_cuda_rigid_pose_views():
    torch = pytest.importorskip("torch")
    sim = weft.Simulation.from_scene("cable_y_junction", device="cuda")
    sim.step(2)
    poses = torch.from_dlpack(sim.poses_view())
    assert tuple(poses.shape) == (60, 7)
    np.testing.assert_array_equal(poses.cpu().numpy(), sim.poses)


def test_device_applies_the_launch_table_as_weft_run_does():
    device = weft.Device("cuda")
    table = device.launch_table
    assert table["reason"]
    if table["applied"]:
        assert table["path"].endswith(".json")
    sim = weft.Simulation.from_scene("cable_y_junction", device=device)
    sim.step(3)
    assert sim.last_frame_ms > 0 and sim.uses_graphs
