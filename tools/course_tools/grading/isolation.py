"""Which isolation the grading kernels get on this machine, and what else the platform offers.

The grader probes these mechanisms and reports each, with what it found or why it cannot use it:

- **bubblewrap** (``bwrap`` on ``PATH`` and able to run ``bwrap`` with the options the grader uses, on ``true``):
  a mount namespace in which the whole filesystem is read-only, the denied paths hidden and only the writable ones
  writable (:mod:`.bubblewrap`). Used first, wherever it works.
- **Landlock** (Linux ≥ 5.13, no privileges): the filesystem sandbox :mod:`.sandbox` applies. Used where bubblewrap
  does not work; inside bubblewrap too, where the kernel offers it (see :func:`detect_isolation` for why).
- **cgroup memory limit** (:mod:`.cgroups`): one cgroup per kernel run, v2 or v1's memory hierarchy, wherever this
  process may make one (root, usually, or a delegated cgroup): the Linux kernel holds the limit, which a fast
  allocation cannot outrun. Used wherever it is found.
- **the memory watch**: the grader itself sums the resident memory of the kernel and everything it started, five
  times a second, and kills them all over ``--memory-mb`` (:func:`.runner.execute`). Always used, with or without a
  cgroup; a file-size limit (``RLIMIT_FSIZE``) is always set too.

``--isolation`` (or ``$COURSE_GRADING_ISOLATION``) picks one: ``auto`` (the default: bubblewrap, else Landlock, else
none), ``bubblewrap`` or ``landlock``; one asked for that this machine cannot give is an error, not a fallback. With
no filesystem sandbox a submission can read and write the instructor's files: :attr:`Isolation.warning` says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, replace

from .bubblewrap import BASE_OPTIONS
from .cgroups import MemoryCgroup, MemoryHierarchy, find_hierarchy
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
    detail: str  # what was found (e.g. "ABI 7"), or why it cannot be used here
    used: bool = False
    program: str | None = None  # the program that provides it, where one does (bwrap)


@dataclass(frozen=True)
class Isolation:
    """What the grading kernels get: the filesystem sandbox and memory limit in use, and every mechanism probed."""

    filesystem: str  # "bubblewrap", "landlock" or "none"
    memory: str  # "cgroup v1", "cgroup v2" (each with the watch), or "watch" alone
    mechanisms: tuple[Mechanism, ...]
    bwrap: str | None = None  # the bwrap program, where bubblewrap is used
    cgroup: MemoryHierarchy | None = None  # where each kernel's memory-limited cgroup is made, where one is

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
        return (
            "warning: no filesystem sandbox (neither bubblewrap nor Landlock works on this system); submissions "
            "can read and write your files. Install bubblewrap (bwrap), or grade inside a container or as a "
            "separate user."
        )

    def apply(self, policy: Policy) -> Policy:
        """``policy`` as the launcher applies it here: inside bubblewrap where it is used (Landlock stays on, and the
        launcher applies it wherever the kernel offers it), in a memory-limited cgroup where one can be made."""
        return replace(
            policy,
            bubblewrap=self.bwrap if self.filesystem == "bubblewrap" else None,
            cgroup_parent=str(self.cgroup.parent) if self.cgroup else None,
            cgroup_version=self.cgroup.version if self.cgroup else 0,
        )


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
    return Mechanism(
        "Landlock filesystem sandbox", False, "this kernel offers none (it needs Linux ≥ 5.13 with Landlock enabled)"
    )


def probe_bubblewrap() -> Mechanism:
    """``bwrap`` on ``PATH`` and able to mount what the grader mounts (:data:`BUBBLEWRAP_PROBE`) around ``true``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Mechanism("bubblewrap", False, "bwrap is not on PATH")
    works, why = _run([bwrap, *BUBBLEWRAP_PROBE])
    if not works:
        return Mechanism("bubblewrap", False, f"{bwrap} --ro-bind / / --dev /dev --proc /proc … true failed: {why}")
    return Mechanism("bubblewrap", True, bwrap, program=bwrap)


def probe_cgroup_memory() -> tuple[Mechanism, MemoryHierarchy | None]:
    """A cgroup memory limit per kernel (:func:`.cgroups.find_hierarchy`), and where its groups are made."""
    hierarchy, found = find_hierarchy()
    if hierarchy is None:
        return Mechanism("cgroup memory limit", False, found), None
    try:  # the grader makes one group per kernel: make one now, so that a refusal shows here and not mid-batch
        MemoryCgroup(hierarchy, 64).close()
    except OSError as err:
        return Mechanism("cgroup memory limit", False, f"{found}, but a group cannot be made there: {err}"), None
    return Mechanism("cgroup memory limit", True, f"one group per kernel in the {found}", used=True), hierarchy


# Always used, on every platform.
MEMORY_WATCH = Mechanism(
    "memory watch", True, "the grader kills a kernel and all it started over the memory limit", used=True
)
FILE_SIZE_LIMIT = Mechanism("file-size limit", True, f"RLIMIT_FSIZE, {Policy().file_size_mb} MB", used=True)


def isolation_choice(choice: str | None = None) -> str:
    """``choice``, else ``$COURSE_GRADING_ISOLATION``, else ``auto``; one of :data:`CHOICES` or a ``ValueError``."""
    picked = (choice or os.environ.get(ISOLATION_VARIABLE) or "auto").strip().lower()
    if picked not in CHOICES:
        raise ValueError(
            f"isolation {picked!r} is not one of {', '.join(CHOICES)} (--isolation, ${ISOLATION_VARIABLE})"
        )
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
        bubblewrap = replace(
            bubblewrap,
            used=True,
            detail=f"{bubblewrap.program}: the filesystem read-only, your "
            "checkout, the submissions and the outputs hidden, writes only to scratch and caches",
        )
    elif bubblewrap.available:
        bubblewrap = replace(bubblewrap, detail=f"{bubblewrap.program} works, but isolation {picked} was asked for")
    if landlock.available:
        landlock = replace(landlock, used=True, detail=landlock.detail + (", inside bubblewrap" if use_bwrap else ""))
    cgroup, hierarchy = probe_cgroup_memory()
    mechanisms = (bubblewrap, landlock, cgroup, MEMORY_WATCH, FILE_SIZE_LIMIT)
    filesystem = "bubblewrap" if use_bwrap else "landlock" if landlock.used else "none"
    memory = f"cgroup v{hierarchy.version}" if hierarchy else "watch"
    return Isolation(filesystem, memory, mechanisms, bubblewrap.program if use_bwrap else None, hierarchy)
