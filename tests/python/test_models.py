"""The weft module's model building and stepping, checked against physics (docs/PYTHON.md).

Runs on the best device there is (CUDA when a GPU is visible, else the CPU backend); test_cuda.py
compares the two.
"""
import threading
import time

import numpy as np
import pytest

import weft

G = 9.81
FPS, SUBSTEPS = 60.0, 10


def fall_of_implicit_euler(substeps):
    """Distance fallen from rest after n substeps of implicit Euler under gravity: g·h²·n(n+1)/2."""
    h = 1.0 / (FPS * SUBSTEPS)
    return G * h * h * substeps * (substeps + 1) / 2.0


def free_cloth(n=8, cell=0.05, z=0.0):
    builder = weft.ClothBuilder()
    builder.add_cloth_grid(weft.ClothGrid(position=(0.0, 0.0, z), dim_x=n, dim_y=n,
                                          cell_x=cell, cell_y=cell))
    return builder.finalize()


def free_rod(segments=5, z=0.0):
    builder = weft.CableBuilder()
    points = np.stack([np.linspace(1.0, 1.5, segments + 1), np.zeros(segments + 1),
                       np.full(segments + 1, z)], axis=1)
    ids = builder.add_rod(points, weft.RodParams(radius=0.01))
    assert len(ids["bodies"]) == segments and len(ids["joints"]) == segments - 1
    return builder.finalize()


def test_cloth_and_rod_fall_as_implicit_euler_predicts():
    """With no contact and no strain, substep k of implicit Euler from rest moves everything by
    g·h²·k. Both start at z = 0, where float32 rounds finely (at z = 1 m the rounding alone adds
    up to 4e-4 of the fall over 60 substeps; here it stays near 3e-6, the bound is 1e-4)."""
    cloth, rod = free_cloth(), free_rod()
    sim = weft.Simulation(cloth=cloth, rigid=rod,
                          cloth_options=weft.SolverOptions(iterations=5),
                          rigid_options=weft.RigidSolverOptions(iterations=5),
                          fps=FPS, substeps=SUBSTEPS)
    sim.step(6)
    assert sim.frames_done == 6
    expected = fall_of_implicit_euler(6 * SUBSTEPS)
    fell = cloth.positions[:, 2] - sim.positions[:, 2]
    np.testing.assert_allclose(fell, expected, atol=1e-4 * expected + 1e-6)
    np.testing.assert_allclose(sim.positions[:, :2], cloth.positions[:, :2], atol=1e-6)
    fell_bodies = rod.poses[:, 2] - sim.poses[:, 2]
    np.testing.assert_allclose(fell_bodies, expected, atol=1e-4 * expected + 1e-6)
    assert all(c["pass"] for c in sim.check_finite())


def test_a_wrong_closed_form_is_caught():
    # The check above must be able to fail: n² instead of n(n+1) is 1.6 % off at 60 substeps.
    sim = weft.Simulation(cloth=free_cloth(), cloth_options=weft.SolverOptions(iterations=5))
    sim.step(6)
    n = 6 * SUBSTEPS
    h = 1.0 / (FPS * SUBSTEPS)
    wrong = G * h * h * n * n / 2.0
    fell = -sim.positions[:, 2]
    assert np.max(np.abs(fell - wrong)) > 1e-4 * wrong


def test_translated_state_moves_the_same():
    """A free cloth under gravity is translation invariant: shifted sideways by d, it ends shifted
    by d (to float32 rounding of the shifted coordinates)."""
    cloth = free_cloth()
    a = weft.Simulation(cloth=cloth, cloth_options=weft.SolverOptions(iterations=5))
    b = weft.Simulation(cloth=cloth, cloth_options=weft.SolverOptions(iterations=5))
    shift = np.array([0.25, -0.5, 0.0], dtype=np.float32)
    b.positions = b.positions + shift
    np.testing.assert_array_equal(b.positions, cloth.positions + shift)
    a.step(3)
    b.step(3)
    np.testing.assert_allclose(b.positions - shift, a.positions, atol=1e-6)
    assert np.abs(a.positions[:, 2]).min() > 0.01  # it did fall


def test_written_velocities_are_used():
    """A cloth given an upward velocity v rises: after n substeps of implicit Euler by
    v·h·n − g·h²·n(n+1)/2."""
    sim = weft.Simulation(cloth=free_cloth(), cloth_options=weft.SolverOptions(iterations=5))
    start = sim.positions
    sim.velocities = np.tile(np.array([0.0, 0.0, 2.0], dtype=np.float32), (sim.positions.shape[0], 1))
    sim.step(2)
    n, h = 2 * SUBSTEPS, 1.0 / (FPS * SUBSTEPS)
    rise = 2.0 * h * n - fall_of_implicit_euler(n)
    np.testing.assert_allclose(sim.positions[:, 2] - start[:, 2], rise, atol=1e-4 * rise)


def test_cloth_draped_over_a_sphere_rests_on_it():
    """A 1 m cloth dropped on a 0.3 m sphere: nothing ends inside the sphere, the cloth wraps
    it (its centre rests on top, its corners hang below the top) and never passes through itself."""
    builder = weft.ClothBuilder()
    n = 16
    builder.add_cloth_grid(weft.ClothGrid(position=(-0.5, -0.5, 0.45), dim_x=n, dim_y=n,
                                          cell_x=1.0 / n, cell_y=1.0 / n, mass=0.01,
                                          particle_radius=0.01,
                                          edge_material=weft.EdgeMaterial(ke=0.01)))
    radius = 0.3
    builder.add_shape(weft.sphere(radius, position=(0.0, 0.0, 0.0),
                                  material=weft.ContactMaterial(ke=1e4, kd=10.0, mu=0.5)))
    cloth = builder.finalize()
    options = weft.SolverOptions(iterations=10)
    options.self_contact.enabled = True
    options.self_contact.radius = 0.005
    options.self_contact.margin = 0.01
    sim = weft.Simulation(cloth=cloth, cloth_options=options)
    sim.step(45)
    x = sim.positions
    distance = np.linalg.norm(x, axis=1)
    assert distance.min() > radius - 0.01, distance.min()
    centre = x[(n // 2) * (n + 1) + n // 2]
    assert abs(centre[2] - radius) < 0.03, centre
    corners = x[[0, n, n * (n + 1), (n + 1) ** 2 - 1]]
    assert np.all(corners[:, 2] < radius - 0.1), corners
    assert sum(sim.self_intersections()) == 0
    assert all(c["pass"] for c in sim.check_finite())


def test_views_are_the_state_itself():
    sim = weft.Simulation(cloth=free_cloth(), cloth_options=weft.SolverOptions(iterations=5),
                          device="cpu")
    view = sim.positions_view()
    assert isinstance(view, np.ndarray) and view.shape == (81, 3) and view.dtype == np.float32
    np.testing.assert_array_equal(view, sim.positions)
    view[:, 0] += 1.0  # writes into the simulation
    np.testing.assert_array_equal(sim.positions, view)
    sim.step(1)
    np.testing.assert_array_equal(view, sim.positions)  # the view follows the state
    del sim  # the view keeps the simulation alive
    assert np.isfinite(view).all()


def test_gil_is_released_while_stepping():
    sim = weft.Simulation(cloth=free_cloth(n=24), cloth_options=weft.SolverOptions(iterations=10),
                          device="cpu")
    sim.step(1)
    started = time.perf_counter()
    sim.step(3)
    one_call = time.perf_counter() - started
    ticks = 0
    worker = threading.Thread(target=sim.step, args=(3,))
    worker.start()
    while worker.is_alive():
        ticks += 1
    worker.join()
    # Python ran beside the C++ frames: at least a thousand loop turns for every second of them
    # (a held GIL would leave the loop the gaps between frames only).
    assert ticks > 1000 * one_call, (ticks, one_call)


def test_the_state_must_be_finite():
    sim = weft.Simulation(cloth=free_cloth(), device="cpu")
    x = sim.positions
    x[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3 holds a non-finite value"):
        sim.positions = x
    assert np.isfinite(sim.positions).all()  # the state was left as it was
    rods = weft.Simulation(rigid=free_rod(), device="cpu")
    poses = rods.poses
    poses[0, 3:] = 0.0
    with pytest.raises(ValueError, match="row 0 has a zero rotation quaternion"):
        rods.poses = poses


def test_a_simulation_steps_in_one_thread_at_a_time():
    # While one thread steps (without the GIL), a second step, or a read or write of the state,
    # from another thread is refused instead of racing it; the stepping thread's result is the
    # same as stepping alone.
    def make():
        return weft.Simulation(cloth=free_cloth(n=24),
                               cloth_options=weft.SolverOptions(iterations=10), device="cpu")
    sim = make()
    worker = threading.Thread(target=sim.step, args=(20,))
    worker.start()
    refused = {"step": 0, "positions": 0}
    stepped = 0  # a step that came just after the worker's ended
    while worker.is_alive():
        for name, call in (("step", lambda: sim.step(1)), ("positions", lambda: sim.positions)):
            try:
                call()
                stepped += name == "step"
            except weft.Error as e:
                assert "stepping in another thread" in str(e)
                refused[name] += 1
    worker.join()
    assert refused["step"] > 0 and refused["positions"] > 0, refused
    alone = make()
    alone.step(20 + stepped)
    np.testing.assert_array_equal(sim.positions, alone.positions)


def test_rigid_model_and_worlds():
    rod = free_rod()
    two = weft.replicate_worlds(rod, 2, spacing=(0.0, 1.0, 0.0))
    assert two.num_bodies == 2 * rod.num_bodies
    assert two.num_joints == 2 * rod.num_joints
    np.testing.assert_allclose(two.poses[rod.num_bodies:, 1] - two.poses[:rod.num_bodies, 1], 1.0)
    combined = weft.combine_worlds([free_cloth(), free_cloth(n=4)])
    assert combined.num_worlds == 2 and combined.num_particles == 81 + 25


def test_rod_graph_junction():
    nodes = np.array([[0, 0, 1], [0.3, 0, 1], [0.6, 0.2, 1], [0.6, -0.2, 1]], dtype=np.float64)
    edges = np.array([[0, 1], [1, 2], [1, 3]])
    builder = weft.CableBuilder()
    ids = builder.add_rod_graph(nodes, edges, weft.RodParams(radius=0.02))
    assert len(ids["bodies"]) == 3 and len(ids["joints"]) == 2
    model = builder.finalize()
    assert model.num_colors >= 2
    mass, inertia = weft.capsule_mass_properties(0.02, 0.15, 1000.0)
    assert model.bodies[0].mass == pytest.approx(mass, rel=1e-6)
    assert model.bodies[0].inertia[2][2] == pytest.approx(inertia[2][2], rel=1e-6)


def test_bad_input_raises_clear_errors():
    builder = weft.ClothBuilder()
    builder.add_cloth_mesh(np.zeros((3, 3)) + np.eye(3), np.array([[0, 1, 5]]))
    with pytest.raises(weft.Error, match="triangle"):
        builder.finalize()
    with pytest.raises(ValueError, match=r"vertices must have shape \(n, 3\)"):
        weft.ClothBuilder().add_cloth_mesh(np.zeros((4, 2)), np.zeros((1, 3), dtype=np.int32))
    # Indices are integers within 32 bits: NumPy's cast would wrap or truncate them silently.
    vertices = np.eye(3)
    with pytest.raises(ValueError, match="outside the 32-bit range"):
        weft.ClothBuilder().add_cloth_mesh(vertices, np.array([[0, 1, 2**32 + 2]], np.int64))
    with pytest.raises(TypeError, match="triangles must hold integer indices, not float64"):
        weft.ClothBuilder().add_cloth_mesh(vertices, np.array([[0, 1, 2.7]]))
    with pytest.raises(TypeError, match="edges must hold integer indices"):
        weft.CableBuilder().add_rod_graph(vertices, np.array([[0.0, 1.5]]))
    weft.ClothBuilder().add_cloth_mesh(vertices, np.array([[0, 1, 2]], np.uint64))  # fits: taken
    with pytest.raises(TypeError, match="all ClothModel or all RigidModel"):
        weft.combine_worlds([free_cloth(), free_rod()])
    with pytest.raises(TypeError, match="no field 'stifness'"):
        weft.TriangleMaterial(stifness=1.0)
    with pytest.raises(weft.Error, match="cloth model, a rigid model or both"):
        weft.Simulation()
    with pytest.raises(weft.Error, match="unknown device 'tpu'"):
        weft.Simulation(cloth=free_cloth(), device="tpu")
    with pytest.raises(weft.Error, match="no rigid model"):
        weft.Simulation(cloth=free_cloth()).poses
    sim = weft.Simulation(cloth=free_cloth())
    with pytest.raises(ValueError, match="positions must have 81 rows"):
        sim.positions = np.zeros((80, 3))
    options = weft.SolverOptions(iterations=0)
    with pytest.raises(weft.Error, match="iterations"):
        weft.Simulation(cloth=free_cloth(), cloth_options=options)
    assert issubclass(weft.Error, RuntimeError)


def test_driven_particles_follow_their_driver():
    """Two fixed corners turned by a ParticleDriver about the z axis at 1 rad/s: after t seconds
    each sits at its start rotated by t radians (evaluated on the device from simulation time)."""
    builder = weft.ClothBuilder()
    builder.add_cloth_grid(weft.ClothGrid(position=(-0.2, -0.2, 0.0), dim_x=4, dim_y=4,
                                          cell_x=0.1, cell_y=0.1))
    corners = [0, 24]
    for p in corners:
        builder.fix_particle(p)
    builder.add_driver(weft.Driver(driver=weft.ParticleDriver(axis_point=(0, 0, 0),
                                                              axis_direction=(0, 0, 1),
                                                              angular_speed=1.0),
                                   particles=corners))
    cloth = builder.finalize()
    sim = weft.Simulation(cloth=cloth, cloth_options=weft.SolverOptions(iterations=5))
    sim.step(12)
    angle = sim.time
    assert angle == pytest.approx(0.2)
    c, s = np.cos(angle), np.sin(angle)
    start = cloth.positions[corners]
    expected = np.stack([c * start[:, 0] - s * start[:, 1], s * start[:, 0] + c * start[:, 1],
                         start[:, 2]], axis=1)
    np.testing.assert_allclose(sim.positions[corners], expected, atol=1e-5)
    assert sim.positions[12, 2] < -0.01  # the free middle falls meanwhile
