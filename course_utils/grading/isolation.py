"""Which isolation the grading kernels get on this machine, and what else the platform offers.

The grader probes these mechanisms and reports each, with what it found or why it cannot use it:

- **bubblewrap** (``bwrap`` on ``PATH`` and able to run ``bwrap`` with the options the grader uses, on ``true``):
  a mount namespace in which the whole filesystem is read-only, the denied paths hidden and only the writable ones
  writable (:mod:`.bubblewrap`). Used first, wherever it works.
- **Landlock** (Linux ≥ 5.13, no privileges): the filesystem sandbox :mod:`.sandbox` applies. Used where bubblewrap
  does not work; inside bubblewrap too, where the kernel offers it (see :func:`detect_isolation` for why).
- **cgroup v2 memory limit**: a delegated, writable cgroup with the memory controller, or a working
  ``systemd-run --user --scope -p MemoryMax=…``. Detected and reported; not used yet (the memory watch below holds
  the limit everywhere, and no machine with a delegated cgroup was at hand to test a launcher for it).
- **the memory watch**: the grader itself sums the resident memory of the kernel and everything it started, five
  times a second, and kills them all over ``--memory-mb`` (:func:`.runner.execute`). Always used; a file-size limit
  (``RLIMIT_FSIZE``) is always set too.

``--isolation`` (or ``$COURSE_GRADING_ISOLATION``) picks one: ``auto`` (the default: bubblewrap, else Landlock, else
none), ``bubblewrap`` or ``landlock``; one asked for that this machine cannot give is an error, not a fallback. With
no filesystem sandbox a submission can read and write the instructor's files: :attr:`Isolation.warning` says so.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from .bubblewrap import BASE_OPTIONS
from .sandbox import Policy, landlock_abi

PROBE_SECONDS = 15
CHOICES = ("auto", "bubblewrap", "landlock")
ISOLATION_VARIABLE = "COURSE_GRADING_ISOLATION"
# The probe: bubblewrap's every kind of mount the grader uses, once, around `true`.
BUBBLEWRAP_PROBE = (*BASE_OPTIONS, "--tmpfs", "/tmp", "--remount-ro", "/tmp", "--", "true")


@dataclass(frozen=True)
class Mechanism:
    """One isolation mechanism as probed on this machine."""

    name: str
    available: bool
    detail: str      # what was found (e.g. "ABI 7"), or why it cannot be used here
    used: bool = False
    program: str | None = None  # the program that provides it, where one does (bwrap)


@dataclass(frozen=True)
class Isolation:
    """What the grading kernels get: the filesystem sandbox and memory limit in use, and every mechanism probed."""

    filesystem: str                    # "bubblewrap", "landlock" or "none"
    memory: str                        # "watch": the grader's watch of resident memory
    mechanisms: tuple[Mechanism, ...]
    bwrap: str | None = None           # the bwrap program, where bubblewrap is used

    def describe(self) -> str:
        """One line for the command's output: what is used, then what else was probed and why it is not used."""
        used = [f"{m.name} ({m.detail})" for m in self.mechanisms if m.used]
        unused = [f"{m.name} ({m.detail})" for m in self.mechanisms if not m.used]
        if self.filesystem == "none":
            used.insert(0, "no filesystem sandbox")
        return "isolation: " + "; ".join(used) + (f". Not used: {'; '.join(unused)}" if unused else "")

    @property
    def warning(self) -> str | None:
        """What the instructor must know when submissions run without a filesystem sandbox, else None."""
        if self.filesystem != "none":
            return None
        return ("warning: no filesystem sandbox (neither bubblewrap nor Landlock works on this system); submissions "
                "can read and write your files. Install bubblewrap (bwrap), or grade inside a container or as a "
                "separate user.")

    def apply(self, policy: Policy) -> Policy:
        """``policy`` as the launcher applies it here: inside bubblewrap where it is used (Landlock stays on, and the
        launcher applies it wherever the kernel offers it)."""
        return replace(policy, bubblewrap=self.bwrap if self.filesystem == "bubblewrap" else None)


def _run(command: list[str]) -> tuple[bool, str]:
    """Whether ``command`` ran and exited 0, and the last line it printed on failure."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, f"{type(err).__name__}: {err}"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return done.returncode == 0, (lines[-1][:200] if lines else f"exit status {done.returncode}")


def probe_landlock() -> Mechanism:
    """The Landlock ABI this kernel offers (:func:`.sandbox.landlock_abi`), if any."""
    abi = landlock_abi()
    if abi:
        return Mechanism("Landlock filesystem sandbox", True, f"ABI {abi}")
    return Mechanism("Landlock filesystem sandbox", False,
                     "this kernel offers none (it needs Linux ≥ 5.13 with Landlock enabled)")


def probe_bubblewrap() -> Mechanism:
    """``bwrap`` on ``PATH`` and able to mount what the grader mounts (:data:`BUBBLEWRAP_PROBE`) around ``true``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Mechanism("bubblewrap", False, "bwrap is not on PATH")
    works, why = _run([bwrap, *BUBBLEWRAP_PROBE])
    if not works:
        return Mechanism("bubblewrap", False, f"{bwrap} --ro-bind / / --dev /dev --proc /proc … true failed: {why}")
    return Mechanism("bubblewrap", True, bwrap, program=bwrap)


def delegated_memory_cgroup(mountinfo: Path = Path("/proc/self/mountinfo"),
                            membership: Path = Path("/proc/self/cgroup")) -> tuple[Path | None, str]:
    """This process's cgroup v2 folder if it offers the memory controller and this process may write there (a
    delegated cgroup), else None; and what was found."""
    mount = None
    try:
        for line in mountinfo.read_text().splitlines():
            fields = line.split(" - ", 1)
            if len(fields) == 2 and fields[1].split()[0] == "cgroup2":
                mount = Path(fields[0].split()[4])
                break
        own = next((line[3:] for line in membership.read_text().splitlines() if line.startswith("0::")), None)
    except OSError as err:
        return None, f"cannot read {err.filename}"
    if mount is None or own is None:
        return None, "no cgroup v2 hierarchy"
    folder = mount / own.lstrip("/")
    try:
        controllers = (folder / "cgroup.controllers").read_text().split()
    except OSError:
        return None, f"cannot read {folder / 'cgroup.controllers'}"
    if "memory" not in controllers:
        return None, f"the cgroup v2 hierarchy at {mount} offers {' '.join(controllers) or 'no controller'}, not memory"
    if not os.access(folder, os.W_OK):
        return None, f"{folder} is not writable (not delegated to this user)"
    return folder, f"delegated cgroup {folder}"


def probe_cgroup_memory() -> Mechanism:
    """A cgroup v2 memory limit: a delegated cgroup, else ``systemd-run --user --scope -p MemoryMax=…``."""
    name = "cgroup v2 memory limit"
    folder, found = delegated_memory_cgroup()
    if folder is not None:
        return Mechanism(name, True, f"{found}, but this grader does not use cgroups yet")
    systemd_run = shutil.which("systemd-run")
    if systemd_run is None:
        return Mechanism(name, False, f"{found}; systemd-run is not on PATH")
    works, why = _run([systemd_run, "--user", "--scope", "--quiet", "-p", "MemoryMax=64M", "true"])
    if not works:
        return Mechanism(name, False, f"{found}; systemd-run --user --scope failed: {why}")
    return Mechanism(name, True, "systemd-run --user --scope works, but this grader does not use cgroups yet")


# Always used, on every platform.
MEMORY_WATCH = Mechanism("memory watch", True, "the grader kills a kernel and all it started over the memory limit",
                         used=True)
FILE_SIZE_LIMIT = Mechanism("file-size limit", True, f"RLIMIT_FSIZE, {Policy().file_size_mb} MB", used=True)


def isolation_choice(choice: str | None = None) -> str:
    """``choice``, else ``$COURSE_GRADING_ISOLATION``, else ``auto``; one of :data:`CHOICES` or a ``ValueError``."""
    picked = (choice or os.environ.get(ISOLATION_VARIABLE) or "auto").strip().lower()
    if picked not in CHOICES:
        raise ValueError(f"isolation {picked!r} is not one of {', '.join(CHOICES)} (--isolation, "
                         f"${ISOLATION_VARIABLE})")
    return picked


def detect_isolation(choice: str | None = None) -> Isolation:
    """Probe this machine and pick the filesystem sandbox (:func:`isolation_choice`): with ``auto``, bubblewrap where
    it works, else Landlock where the kernel offers it, else none; ``bubblewrap`` or ``landlock`` that one, or a
    ``ValueError`` saying why it cannot be had here.

    Inside bubblewrap the launcher applies Landlock as well, where the kernel offers it: the same rules, checked by
    another mechanism. It costs nothing the Landlock-only path does not already pay, and it covers what a mount
    namespace alone leaves open: ``/proc/<pid>/root`` of the instructor's other processes (the host's whole
    filesystem, which a setuid bwrap without a user namespace may leave reachable) and a denied path that did not
    exist yet when the kernel started (bubblewrap can only hide what exists). Landlock forbids a sandboxed process to
    mount or unmount, too."""
    picked = isolation_choice(choice)
    landlock, bubblewrap = probe_landlock(), probe_bubblewrap()
    if picked == "bubblewrap" and not bubblewrap.available:
        raise ValueError(f"--isolation bubblewrap, but bubblewrap cannot be used here: {bubblewrap.detail}")
    if picked == "landlock" and not landlock.available:
        raise ValueError(f"--isolation landlock, but Landlock cannot be used here: {landlock.detail}")
    use_bwrap = bubblewrap.available and picked != "landlock"
    if use_bwrap:
        bubblewrap = replace(bubblewrap, used=True, detail=f"{bubblewrap.program}: the filesystem read-only, your "
                             "checkout, the submissions and the outputs hidden, writes only to scratch and caches")
    elif bubblewrap.available:
        bubblewrap = replace(bubblewrap, detail=f"{bubblewrap.program} works, but isolation {picked} was asked for")
    if landlock.available:
        landlock = replace(landlock, used=True, detail=landlock.detail + (", inside bubblewrap" if use_bwrap else ""))
    mechanisms = (bubblewrap, landlock, MEMORY_WATCH, FILE_SIZE_LIMIT, probe_cgroup_memory())
    filesystem = "bubblewrap" if use_bwrap else "landlock" if landlock.used else "none"
    return Isolation(filesystem, "watch", mechanisms, bubblewrap.program if use_bwrap else None)
