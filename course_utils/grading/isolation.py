"""Which isolation the grading kernels get on this machine, and what else the platform offers.

The grader probes these mechanisms and reports each, with what it found or why it cannot use it:

- **Landlock** (Linux ≥ 5.13, no privileges): the filesystem sandbox :mod:`.sandbox` applies. Used wherever the
  kernel offers it.
- **bubblewrap** (``bwrap`` on ``PATH`` and able to run ``bwrap --ro-bind / / true``): a mount-namespace sandbox.
  Detected and reported; the grader has no bubblewrap launcher yet (none could be tested where this was written).
- **cgroup v2 memory limit**: a delegated, writable cgroup with the memory controller, or a working
  ``systemd-run --user --scope -p MemoryMax=…``. Detected and reported; not used yet, for the same reason.
- **the memory watch**: the grader itself sums the resident memory of the kernel and everything it started, five
  times a second, and kills them all over ``--memory-mb`` (:func:`.runner.execute`). Always used; a file-size limit
  (``RLIMIT_FSIZE``) is always set too.

With no filesystem sandbox a submission can read and write the instructor's files: :attr:`Isolation.warning` says so.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .sandbox import Policy, landlock_abi

PROBE_SECONDS = 15


@dataclass(frozen=True)
class Mechanism:
    """One isolation mechanism as probed on this machine."""

    name: str
    available: bool
    detail: str      # what was found (e.g. "ABI 7"), or why it cannot be used here
    used: bool = False


@dataclass(frozen=True)
class Isolation:
    """What the grading kernels get: the filesystem sandbox and memory limit in use, and every mechanism probed."""

    filesystem: str                    # "landlock" or "none"
    memory: str                        # "watch": the grader's watch of resident memory
    mechanisms: tuple[Mechanism, ...]

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
        return ("warning: no filesystem sandbox (no Landlock) on this system; submissions can read and write your "
                "files. Grade inside a container or as a separate user.")


def _run(command: list[str]) -> tuple[bool, str]:
    """Whether ``command`` ran and exited 0, and the last line it printed on failure."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, f"{type(err).__name__}: {err}"
    lines = (done.stderr or done.stdout).strip().splitlines()
    return done.returncode == 0, (lines[-1][:200] if lines else f"exit status {done.returncode}")


def probe_landlock() -> Mechanism:
    abi = landlock_abi()
    if abi:
        return Mechanism("Landlock filesystem sandbox", True, f"ABI {abi}")
    return Mechanism("Landlock filesystem sandbox", False,
                     "this kernel offers none (it needs Linux ≥ 5.13 with Landlock enabled)")


def probe_bubblewrap() -> Mechanism:
    """``bwrap`` on ``PATH`` and able to bind the root read-only and run ``true``."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Mechanism("bubblewrap", False, "bwrap is not on PATH")
    works, why = _run([bwrap, "--ro-bind", "/", "/", "true"])
    if not works:
        return Mechanism("bubblewrap", False, f"{bwrap} --ro-bind / / true failed: {why}")
    return Mechanism("bubblewrap", True, f"{bwrap} works, but this grader has no bubblewrap launcher yet")


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


def detect_isolation() -> Isolation:
    """Probe this machine; the filesystem sandbox used is Landlock where the kernel offers it, else none."""
    landlock = probe_landlock()
    landlock = Mechanism(landlock.name, landlock.available, landlock.detail, used=landlock.available)
    mechanisms = (landlock, MEMORY_WATCH, FILE_SIZE_LIMIT, probe_bubblewrap(), probe_cgroup_memory())
    return Isolation("landlock" if landlock.used else "none", "watch", mechanisms)
