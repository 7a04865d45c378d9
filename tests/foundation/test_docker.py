"""The Dockerfiles cannot be built here (no engine); check what they depend on instead."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((REPO / "docker").glob("*.Dockerfile"))


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_every_copied_path_exists(dockerfile):
    sources = [line.split()[1] for line in dockerfile.read_text().splitlines() if line.startswith("COPY ")]
    assert sources
    for source in sources:
        assert (REPO / source).exists(), f"{dockerfile.name} copies {source}, which is not in the repository"


def test_deploy_image_pins_the_same_versions_as_requirements():
    pinned = dict(line.split("==") for line in (REPO / "requirements.txt").read_text().splitlines()
                  if "==" in line and not line.startswith("#"))
    deploy = (REPO / "docker/deploy.Dockerfile").read_text()
    for name, version in re.findall(r"([a-z0-9-]+)==([0-9.]+)", deploy):
        assert pinned.get(name) == version, f"{name}=={version} in deploy.Dockerfile, {pinned.get(name)} pinned"
