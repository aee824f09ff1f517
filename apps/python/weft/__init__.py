"""Weft: Vertex Block Descent cloth and Augmented VBD cables on CUDA and CPU.

Build a model with ClothBuilder or CableBuilder (NumPy arrays in), step it in a Simulation,
read and write its state as NumPy arrays (or as device views without copies), run the registered
scenes, benchmarks and the launch tuner. docs/PYTHON.md has the whole tour; every class and
function has a docstring.

    import weft
    sim = weft.Simulation.from_scene("cloth_hanging")
    sim.step(60)
    print(sim.positions[:, 2].min(), sim.scene_checks())
"""

import os as _os

from . import _weft
from ._weft import *  # noqa: F401,F403  (the compiled classes and functions)
from ._weft import Error, __version__, commit  # noqa: F401

_weft._set_packaged_tables_dir(_os.path.join(_os.path.dirname(__file__), "tables"))

def pose(p=(0.0, 0.0, 0.0), q=(0.0, 0.0, 0.0, 1.0)):
    """A Transform: position p [m] and unit quaternion q = (x, y, z, w)."""
    return Transform(p=p, q=q)  # noqa: F405


def _shape(geometry, position, rotation, material, margin, name):
    shape = Shape(name=name, geometry=geometry, margin=margin)  # noqa: F405
    if material is not None:
        shape.material = material
    motion = shape.motion
    motion.pose0 = pose(position, rotation)
    shape.motion = motion
    return shape


def sphere(radius, position=(0.0, 0.0, 0.0), material=None, margin=0.0, name="sphere"):
    """A static sphere for ClothBuilder.add_shape."""
    return _shape(ShapeGeometry(type=ShapeType.SPHERE, radius=radius),  # noqa: F405
                  position, (0.0, 0.0, 0.0, 1.0), material, margin, name)


def box(half_extents, position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0, 1.0), material=None,
        margin=0.0, name="box"):
    """A static box (half extents along its axes) for ClothBuilder.add_shape."""
    return _shape(ShapeGeometry(type=ShapeType.BOX, half_extents=half_extents),  # noqa: F405
                  position, rotation, material, margin, name)


def capsule(radius, half_height, position=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0, 1.0),
            material=None, margin=0.0, name="capsule"):
    """A static capsule (axis local z, half height without the caps) for ClothBuilder.add_shape."""
    return _shape(ShapeGeometry(type=ShapeType.CAPSULE, radius=radius,  # noqa: F405
                                half_height=half_height),
                  position, rotation, material, margin, name)


def ground(height=0.0, material=None, margin=0.0, name="ground"):
    """The plane z = height (normal +z) for ClothBuilder.add_shape."""
    return _shape(ShapeGeometry(type=ShapeType.PLANE), (0.0, 0.0, height),  # noqa: F405
                  (0.0, 0.0, 0.0, 1.0), material, margin, name)
