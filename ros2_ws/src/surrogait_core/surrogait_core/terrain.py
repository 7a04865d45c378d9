"""Terrain courses: rough ground, slopes and stairs as MuJoCo height fields, the same for training,
evaluation and the rehearsal simulator.

A course runs along +x. The robot starts at the origin on flat ground; the feature (`COURSE_START_X`
to `COURSE_END_X`, 4 m) follows, then flat ground again, all `COURSE_WIDTH_M` wide:
- flat: nothing;
- rough: heights uniform in ±`ROUGH_AMPLITUDE_M` on a 0.2 m grid, interpolated between (legged_gym's
  random uniform terrain);
- slope: up at `SLOPE_DEG` to a plateau, then down at the same angle;
- stairs: `STEP_HEIGHT_M` risers on `STEP_DEPTH_M` treads up to a plateau, then down.
`difficulty` (0..1] scales the amplitude, angle or riser (a curriculum's levels); 1 is the issue's target.

A height field is a grid of triangles, so a riser becomes a ramp one cell (`CELL_M`) wide; the grid
is fine enough that a foot (2 cm radius) meets a step, not a slope. The plane under it is lowered
below the course, so the height field is the ground wherever the robot walks.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

TERRAINS = ("flat", "rough", "slope", "stairs")
CELL_M = 0.025
COURSE_START_X = 0.5  # m: where the feature begins (the robot starts at x = 0)
COURSE_LENGTH_M = 4.0
COURSE_END_X = COURSE_START_X + COURSE_LENGTH_M
COURSE_WIDTH_M = 4.0
X_RANGE = (-1.5, 8.5)  # m: the height field's extent along the course
ROUGH_AMPLITUDE_M = 0.04
ROUGH_GRID_M = 0.2
SLOPE_DEG = 15.0
STEP_HEIGHT_M = 0.10
STEP_DEPTH_M = 0.30
# Every course's surface lies in this band (m): the height field's vertical range is fixed, so a model's
# course can be exchanged after compiling (MuJoCo sizes a geom's collision bounds from it at compile time).
Z_RANGE = (-0.05, 0.6)


@dataclasses.dataclass(frozen=True)
class Terrain:
    """A course's surface: heights (m, world z) on a grid of `cell_m` whose cell [0, 0] is at (x0, y0)."""

    kind: str
    heights: np.ndarray  # (ny, nx): row = y, column = x (MuJoCo's height-field layout)
    x0: float
    y0: float
    cell_m: float = CELL_M

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The surface height (m) under world points (x, y), bilinear; the course's edge value outside it."""
        ny, nx = self.heights.shape
        fx = np.clip((np.asarray(x) - self.x0) / self.cell_m, 0, nx - 1)
        fy = np.clip((np.asarray(y) - self.y0) / self.cell_m, 0, ny - 1)
        ix, iy = np.minimum(fx.astype(int), nx - 2), np.minimum(fy.astype(int), ny - 2)
        tx, ty = fx - ix, fy - iy
        h = self.heights
        return ((1 - ty) * ((1 - tx) * h[iy, ix] + tx * h[iy, ix + 1])
                + ty * ((1 - tx) * h[iy + 1, ix] + tx * h[iy + 1, ix + 1]))


def make_terrain(kind: str, seed: int = 0, difficulty: float = 1.0, cell_m: float = CELL_M) -> Terrain:
    """The course of `kind` (one of TERRAINS) at `difficulty` in (0, 1], on a grid of `cell_m` (m)."""
    if kind not in TERRAINS:
        raise ValueError(f"unknown terrain {kind!r}; expected one of {', '.join(TERRAINS)}")
    if not 0.0 < difficulty <= 1.0:
        raise ValueError(f"terrain difficulty must be in (0, 1], got {difficulty}")
    if not 0.0 < cell_m <= ROUGH_GRID_M:
        raise ValueError(f"terrain cell must be in (0, {ROUGH_GRID_M}] m, got {cell_m}")
    xs = np.arange(X_RANGE[0], X_RANGE[1] + cell_m / 2, cell_m)
    ys = np.arange(-COURSE_WIDTH_M / 2, COURSE_WIDTH_M / 2 + cell_m / 2, cell_m)
    along = np.clip(xs - COURSE_START_X, 0.0, COURSE_LENGTH_M)  # m into the feature
    inside = (xs >= COURSE_START_X) & (xs <= COURSE_END_X)
    profile = np.zeros_like(xs)  # height along x, for the features that do not vary across
    if kind == "slope":
        rise = np.tan(np.radians(SLOPE_DEG * difficulty))
        ramp = 0.4 * COURSE_LENGTH_M  # up, a plateau of 0.2 of the length, down
        profile = rise * np.minimum(np.minimum(along, ramp), COURSE_LENGTH_M - along)
    elif kind == "stairs":
        riser = STEP_HEIGHT_M * difficulty
        steps = int(0.4 * COURSE_LENGTH_M / STEP_DEPTH_M)  # 5 up, a plateau, 5 down
        up = np.minimum(np.floor(along / STEP_DEPTH_M), steps)
        down = np.minimum(np.floor((COURSE_LENGTH_M - along) / STEP_DEPTH_M), steps)
        profile = riser * np.minimum(up, down)
    heights = np.tile(np.where(inside, profile, 0.0), (len(ys), 1))
    if kind == "rough":
        # As legged_gym's random uniform terrain: heights drawn on a coarse grid, interpolated between.
        rng = np.random.default_rng(seed)
        coarse_x = np.arange(COURSE_START_X, COURSE_END_X + ROUGH_GRID_M / 2, ROUGH_GRID_M)
        coarse_y = np.arange(ys[0], ys[-1] + ROUGH_GRID_M, ROUGH_GRID_M)
        coarse = rng.uniform(-1.0, 1.0, (len(coarse_y), len(coarse_x))) * ROUGH_AMPLITUDE_M * difficulty
        coarse[:, [0, -1]] = 0.0  # meets the flat ground at both ends
        along_rows = np.stack([np.interp(xs, coarse_x, row) for row in coarse])  # (coarse y, x)
        heights = np.stack([np.interp(ys, coarse_y, col) for col in along_rows.T], axis=1)
        heights = np.where(inside[None, :], heights, 0.0)
    return Terrain(kind, heights, float(xs[0]), float(ys[0]), cell_m)


def add_terrain(spec: mujoco.MjSpec, terrain: Terrain, floor_geom: str = "floor") -> None:
    """Put `terrain`'s height field into a scene (before compiling), the floor plane lowered beneath it.
    After compiling, `set_terrain_heights` writes the heights: MuJoCo rescales elevation data given to the
    compiler to fill [0, 1], which would stretch every course to the whole band."""
    ny, nx = terrain.heights.shape
    low, span = Z_RANGE[0], Z_RANGE[1] - Z_RANGE[0]
    half_x, half_y = 0.5 * (nx - 1) * terrain.cell_m, 0.5 * (ny - 1) * terrain.cell_m
    spec.add_hfield(name="terrain", nrow=ny, ncol=nx, size=[half_x, half_y, span, 0.1], userdata=[0.0] * (nx * ny))
    floor = spec.geom(floor_geom)
    spec.worldbody.add_geom(name="terrain", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="terrain",
                            pos=[terrain.x0 + half_x, terrain.y0 + half_y, low], friction=floor.friction,
                            contype=floor.contype, conaffinity=floor.conaffinity, priority=floor.priority,
                            rgba=[0.45, 0.5, 0.55, 1.0])  # collides as the floor does (a new geom would not)
    floor.pos = [0.0, 0.0, low - 0.05]


def scene_model(scene_path: str, terrain: str = "flat", seed: int = 0) -> mujoco.MjModel:
    """A robot's scene (its MJCF scene file) on the course `terrain` ("flat": the scene as it is)."""
    if terrain == "flat":
        return mujoco.MjModel.from_xml_path(str(scene_path))
    return compile_with_terrain(mujoco.MjSpec.from_file(str(scene_path)), make_terrain(terrain, seed))


def compile_with_terrain(spec: mujoco.MjSpec, terrain: Terrain) -> mujoco.MjModel:
    """`spec` compiled on `terrain` (`add_terrain`, compile, `set_terrain_heights`)."""
    add_terrain(spec, terrain)
    model = spec.compile()
    set_terrain_heights(model, terrain)
    return model


def set_terrain_heights(model: mujoco.MjModel, terrain: Terrain) -> None:
    """Give a compiled model (of a scene made by `add_terrain`, same grid) another course's surface:
    a robot's own model copy gets its own course (a curriculum's level)."""
    hfield = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_HFIELD, "terrain")
    adr, size = model.hfield_adr[hfield], model.hfield_nrow[hfield] * model.hfield_ncol[hfield]
    if size != terrain.heights.size:
        raise ValueError(f"the model's height field has {size} cells, the terrain {terrain.heights.size}")
    model.hfield_data[adr:adr + size] = _elevation(terrain).ravel()


def _elevation(terrain: Terrain) -> np.ndarray:
    """The heights as MuJoCo's normalised elevation data in the fixed band Z_RANGE."""
    low, high = Z_RANGE
    if terrain.heights.min() < low or terrain.heights.max() > high:
        raise ValueError(f"terrain {terrain.kind!r} reaches outside {Z_RANGE} m")
    return (terrain.heights - low) / (high - low)
