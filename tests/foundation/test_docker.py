"""The Dockerfiles cannot be built here (no Docker engine): parse them and check what they rely on.

Rules, each with a test that a Dockerfile breaking it fails with a message naming the problem:
base images pinned by a tag (no `latest`, none untagged); every COPY/ADD source in the repository;
every `pip install name==version` at requirements.txt's version, nothing installed unpinned; every
ENTRYPOINT/CMD runs a console script of this project or a documented system command (docker/README.md),
and a `ros2 launch` file it names is in the repository.
"""

import importlib.metadata
import json
import re
import shlex
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

REPO = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((REPO / "docker").glob("*.Dockerfile"))
SYSTEM_COMMANDS = {"ros2", "gz", "bash"}  # the commands docker/README.md documents besides the project's
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;]+)$")
VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
# pip options followed by a value (a file, URL or path, never a package to pin)
PIP_VALUE_OPTIONS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version",
    "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--cache-dir", "-C",
    "--config-settings", "--trusted-host", "--proxy", "--retries", "--timeout", "--log", "--report",
    "--only-binary", "--no-binary",
}
SHELL_BREAKS = {"&&", "||", ";", "|", "&", ">", ">>", "<", "(", ")", "then", "else", "fi", "do", "done"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        match = PIN.match(line.split("#")[0].strip())
        if match:
            pins[_normalise(match.group(1))] = match.group(3)
    return pins


def project_console_scripts() -> set[str]:
    """Console scripts of this project's installed packages (the distributions named surrogait*)."""
    return {ep.name for ep in importlib.metadata.entry_points(group="console_scripts")
            if ep.dist is not None and _normalise(ep.dist.name).startswith("surrogait")}


def _instructions(path: Path) -> list[tuple[str, str]]:
    parser = DockerfileParser(path=str(path), env_replace=False)
    return [(item["instruction"], item["value"]) for item in parser.structure if item["instruction"] != "COMMENT"]


# ---------------------------------------------------------------- rule 1: base images


def base_image_problems(path: Path, build_args: dict[str, str] | None = None) -> list[str]:
    """Every FROM names a stage of this file or an image pinned by a tag that is not `latest`."""
    args: dict[str, str] = {}
    stages: set[str] = set()
    problems = []
    seen_from = False
    for instruction, value in _instructions(path):
        if instruction == "ARG" and not seen_from:  # ARGs before the first FROM may be used in FROM lines
            name, _, default = value.partition("=")
            args[name.strip()] = (build_args or {}).get(name.strip(), default.strip().strip('"'))
        if instruction != "FROM":
            continue
        seen_from = True
        words = [w for w in value.split() if not w.startswith("--")]
        image = VARIABLE.sub(lambda m: args.get(m.group(1), ""), words[0])
        alias = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
        name = image.split("@")[0]
        tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else None
        if image in stages or "@sha256:" in image:
            pass  # an earlier stage of this file, or pinned by digest
        elif tag is None:
            problems.append(f"{path.name}: base image {image!r} is untagged: pin it by a tag (e.g. name:1.2)")
        elif tag == "latest":
            problems.append(f"{path.name}: base image {image!r} uses the moving tag 'latest': pin a version tag")
        if alias:
            stages.add(alias)
    return problems


# ---------------------------------------------------------------- rule 2: COPY / ADD sources


def copy_problems(path: Path) -> list[str]:
    """Every COPY/ADD source (not --from another stage) exists in the repository, the build context."""
    problems = []
    for instruction, value in _instructions(path):
        if instruction not in ("COPY", "ADD"):
            continue
        words = json.loads(value) if value.lstrip().startswith("[") else shlex.split(value)
        if any(w.startswith("--from=") for w in words):
            continue
        sources = [w for w in words if not w.startswith("--")][:-1]
        for source in sources:
            if re.match(r"^[a-z]+://", source):
                problems.append(f"{path.name}: {instruction} {source} fetches from the network, not the repository")
            elif not list(REPO.glob(source.lstrip("/"))):
                problems.append(f"{path.name}: {instruction} {source}: not in the repository")
    return problems


# ---------------------------------------------------------------- rule 3: pip pins


def pip_requirements(command: str) -> list[str]:
    """The requirement words of every `pip install` in a shell command (options and paths left out)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    found = []
    i = 0
    while i < len(tokens):
        is_pip = Path(tokens[i]).name in ("pip", "pip3") or (tokens[i] == "-m" and i + 1 < len(tokens)
                                                              and tokens[i + 1] == "pip")
        if not is_pip:
            i += 1
            continue
        i += 2 if tokens[i] == "-m" else 1
        if i >= len(tokens) or tokens[i] != "install":
            continue
        i += 1
        while i < len(tokens) and tokens[i] not in SHELL_BREAKS:
            word = tokens[i]
            if word.startswith("-"):
                i += 2 if word in PIP_VALUE_OPTIONS else 1
                continue
            if not ("/" in word or word.startswith(".") or word.startswith("$")):
                found.append(word)
            i += 1
    return found


def pip_problems(path: Path) -> list[str]:
    pins = requirement_pins()
    problems = []
    for instruction, value in _instructions(path):
        if instruction != "RUN":
            continue
        for word in pip_requirements(value):
            match = PIN.match(word)
            if match is None:
                problems.append(f"{path.name}: pip installs {word!r} unpinned: pin it as in requirements.txt")
                continue
            name, version = _normalise(match.group(1)), match.group(3)
            if name not in pins:
                problems.append(f"{path.name}: pip installs {word}, which requirements.txt does not pin: add it there")
            elif pins[name] != version:
                problems.append(f"{path.name}: pip installs {word}, requirements.txt pins {name}=={pins[name]}")
    return problems


# ---------------------------------------------------------------- rule 4: ENTRYPOINT / CMD


def _command(value: str) -> list[str]:
    return json.loads(value) if value.lstrip().startswith("[") else shlex.split(value)


def entry_problems(path: Path, scripts: set[str] | None = None) -> list[str]:
    """ENTRYPOINT's executable, and CMD's when it is the command (no ENTRYPOINT, or one that execs
    "$@"), is a project console script or a documented system command; `ros2 launch FILE` names a
    file of the repository (the images copy it to their WORKDIR)."""
    scripts = project_console_scripts() if scripts is None else scripts
    problems = []
    entrypoint: list[str] | None = None
    workdir = "/"
    for instruction, value in _instructions(path):
        if instruction == "FROM":
            entrypoint, workdir = None, "/"
        elif instruction == "WORKDIR":
            workdir = value.strip()
        elif instruction in ("ENTRYPOINT", "CMD"):
            command = _command(value)
            if instruction == "ENTRYPOINT":
                entrypoint = command
            elif entrypoint is not None and not any('exec "$@"' in word for word in entrypoint):
                continue  # CMD only gives the entrypoint its arguments
            if not command:
                problems.append(f"{path.name}: empty {instruction}")
                continue
            executable = Path(command[0]).name
            if executable not in scripts and executable not in SYSTEM_COMMANDS:
                problems.append(f"{path.name}: {instruction} runs {command[0]!r}, which is not a console script of "
                                f"this project nor a documented system command ({', '.join(sorted(SYSTEM_COMMANDS))})")
            if command[:2] == ["ros2", "launch"] and len(command) > 2:
                problems += _launch_file_problems(path, command[2:4], workdir)
    return problems


def _launch_file_problems(path: Path, words: list[str], workdir: str) -> list[str]:
    """`ros2 launch PACKAGE FILE` (a package of ros2_ws/src installing launch/FILE) or `ros2 launch PATH`."""
    if len(words) == 2 and not words[0].endswith(".py"):
        package, name = words
        if not (REPO / "ros2_ws" / "src" / package / "launch" / name).is_file():
            return [f"{path.name}: ros2 launch {package} {name}: no such launch file in ros2_ws/src/{package}/launch"]
        return []
    launch_file = words[0]
    if launch_file.startswith("/"):
        if not launch_file.startswith(workdir.rstrip("/") + "/"):
            return [f"{path.name}: ros2 launch {launch_file}: outside {workdir}, where the repository is copied"]
        launch_file = launch_file[len(workdir.rstrip("/")) + 1:]
    if not (REPO / launch_file).is_file():
        return [f"{path.name}: ros2 launch {launch_file}: no such launch file in the repository"]
    return []


# ---------------------------------------------------------------- the checks on docker/


def test_the_three_images_are_there():
    assert {p.name for p in DOCKERFILES} == {"train.Dockerfile", "deploy.Dockerfile", "gazebo.Dockerfile"}


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_base_images_are_pinned_by_tag(dockerfile):
    assert base_image_problems(dockerfile) == []


def test_the_cuda_build_arg_puts_mjx_on_the_gpu():
    """CUDA=1 installs JAX's CUDA wheels at the pinned JAX version (MJX's device), not an unused CUDA torch."""
    train = REPO / "docker/train.Dockerfile"
    assert base_image_problems(train, {"CUDA": "1"}) == []
    stages = {}
    for instruction, value in _instructions(train):
        if instruction == "FROM":
            stage = value.split()[-1]
        elif instruction == "RUN":
            stages.setdefault(stage, []).append(value)
    assert any(v.startswith("base-cuda${CUDA}") for i, v in _instructions(train) if i == "FROM")
    assert any("jax[cuda12]==" in run for run in stages["base-cuda1"])
    assert not any("jax[cuda" in run for run in stages["base-cuda0"])
    assert all("whl/cpu torch==" in run for run in stages["train"] if "torch==" in run)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_every_copied_path_is_in_the_repository(dockerfile):
    assert copy_problems(dockerfile) == []


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_pip_installs_are_requirements_pins(dockerfile):
    assert pip_problems(dockerfile) == []


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_entry_commands_exist(dockerfile):
    assert entry_problems(dockerfile) == []


def test_the_images_run_what_they_are_for():
    scripts = project_console_scripts()
    assert {"surrogait-train", "policy_node", "estimator_node", "safety_monitor"} <= scripts
    last = {p.stem: [(i, _command(v)) for i, v in _instructions(p) if i in ("ENTRYPOINT", "CMD")] for p in DOCKERFILES}
    assert last["train"][0] == ("ENTRYPOINT", ["surrogait-train"])
    assert last["deploy"][-1] == ("CMD", ["ros2", "launch", "surrogait_bringup", "go2_robot.launch.py"])
    assert last["gazebo"][-1] == ("CMD", ["ros2", "launch", "surrogait_bringup", "go2_gazebo.launch.py"])


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_the_build_context_leaves_the_venv_out(dockerfile):
    ignore = dockerfile.with_name(dockerfile.name + ".dockerignore")
    assert ignore.is_file(), f"{ignore.name} is missing: the build context would carry .venv"
    assert {".venv", ".jazzy", "runs"} <= set(ignore.read_text().split())


def test_no_image_installs_opencv_or_a_numpy_against_apts_rclpy():
    """The Unitree SDK's wheel declares opencv-python, which none of its modules imports: the images install it
    without dependencies. The ROS images keep Ubuntu's numpy, which apt's rclpy was built against."""
    for dockerfile in DOCKERFILES:
        runs = [v for i, v in _instructions(dockerfile) if i == "RUN"]
        for run in runs:
            for word in pip_requirements(run):
                assert not word.lower().startswith("opencv"), f"{dockerfile.name}: {word}"
                if word.startswith("unitree-sdk2py"):
                    assert "--no-deps" in run.split(word)[0].rsplit("pip install", 1)[-1], \
                        f"{dockerfile.name}: {word} without --no-deps pulls opencv-python"
        if "ros:jazzy" in dockerfile.read_text():
            assert not any(w.startswith("numpy") for run in runs for w in pip_requirements(run)), dockerfile.name


def test_the_deploy_image_builds_cyclone_dds_where_pypi_has_no_wheel():
    deploy = REPO / "docker/deploy.Dockerfile"
    text = deploy.read_text()
    assert "AS cyclonedds" in text and "pip wheel" in text and "CYCLONEDDS_HOME=/opt/cyclonedds" in text
    assert "--branch \"$CYCLONEDDS_REF\"" in text and "ARG CYCLONEDDS_REF=11.0.1" in text
    assert requirement_pins()["cyclonedds"] == "11.0.1", "the C library's version must be the binding's"


# ---------------------------------------------------------------- each rule fails loudly

GOOD = 'FROM python:3.11-slim-bookworm\nCOPY requirements.txt ./\nRUN pip install numpy==2.4.6 -r requirements.txt\n'


@pytest.mark.parametrize(("body", "message"), [
    ("FROM python:latest\n", "moving tag 'latest'"),
    ("FROM python\n", "is untagged"),
    ("ARG BASE=ubuntu\nFROM ${BASE}\n", "is untagged"),
    ("FROM python:3.11-slim-bookworm\nCOPY no/such/dir /x\n", "COPY no/such/dir: not in the repository"),
    ("FROM python:3.11-slim-bookworm\nADD https://example.com/a.tar.gz /x\n", "fetches from the network"),
    ("FROM python:3.11-slim-bookworm\nRUN pip install --no-cache-dir numpy==1.26.4\n",
     "pip installs numpy==1.26.4, requirements.txt pins numpy==2.4.6"),
    ("FROM python:3.11-slim-bookworm\nRUN apt-get update && python -m pip install requests==2.0.0\n",
     "requirements.txt does not pin"),
    ("FROM python:3.11-slim-bookworm\nRUN pip3 install -U PyYAML\n", "pip installs 'PyYAML' unpinned"),
    ('FROM python:3.11-slim-bookworm\nCMD ["train-everything"]\n', "CMD runs 'train-everything'"),
    ('FROM python:3.11-slim-bookworm\nENTRYPOINT ["/usr/bin/nosuch", "-x"]\n', "ENTRYPOINT runs '/usr/bin/nosuch'"),
    ('FROM python:3.11-slim-bookworm\nENTRYPOINT ["/bin/bash", "-c", "exec \\"$@\\"", "--"]\nCMD ["nosuch"]\n',
     "CMD runs 'nosuch'"),
    ('FROM python:3.11-slim-bookworm\nWORKDIR /surrogait\nCMD ["ros2", "launch", "launch/nosuch.launch.py"]\n',
     "no such launch file"),
    ('FROM python:3.11-slim-bookworm\nCMD ["ros2", "launch", "surrogait_bringup", "nosuch.launch.py"]\n',
     "no such launch file in ros2_ws/src/surrogait_bringup/launch"),
])
def test_a_dockerfile_breaking_a_rule_fails_with_a_clear_message(tmp_path, body, message):
    path = tmp_path / "broken.Dockerfile"
    path.write_text(body)
    problems = (base_image_problems(path) + copy_problems(path) + pip_problems(path)
                + entry_problems(path, scripts={"surrogait-train"}))
    assert any(message in p for p in problems), problems


def test_a_dockerfile_keeping_the_rules_passes(tmp_path):
    """The rules are not vacuous the other way round: a good file has no problem, arguments to an
    entrypoint are not taken for commands."""
    path = tmp_path / "good.Dockerfile"
    path.write_text(GOOD + 'ENTRYPOINT ["surrogait-train"]\nCMD ["--help"]\n')
    assert pip_requirements("pip install numpy==2.4.6 -r requirements.txt -e ./x") == ["numpy==2.4.6"]
    assert (base_image_problems(path) + copy_problems(path) + pip_problems(path)
            + entry_problems(path, scripts={"surrogait-train"})) == []


def test_the_rehearsal_compose_file_starts_the_simulator_and_the_three_nodes_from_installed_files():
    import yaml

    compose = yaml.safe_load((REPO / "docker/compose.rehearsal.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"go2_sim", "estimator_node", "safety_monitor", "policy_node"}
    build = services["go2_sim"]["build"]
    assert (REPO / "docker" / build["context"] / build["dockerfile"]).resolve().is_file()
    for name, service in services.items():
        command = service["command"]
        assert command[:2] == ["ros2", "run"] and command[3] == name, command
        package = command[2]
        assert (REPO / "ros2_ws/src" / package / "package.xml").is_file()
        for word in command:
            for value in (word.split(":=", 1)[-1],):
                prefix = "/surrogait/ros2_ws/install/"
                if value.startswith(prefix):  # <package>/share/<package>/<path> -> ros2_ws/src/<package>/<path>
                    pkg, _, _, *rest = value[len(prefix):].split("/")
                    assert (REPO / "ros2_ws/src" / pkg / Path(*rest)).is_file(), value
        assert service["network_mode"] == "host" and service["environment"]["ROS_DOMAIN_ID"] == "1"
