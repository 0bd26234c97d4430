"""A memory limit the kernel itself enforces: one cgroup per grading kernel, where this machine lets the grader make
one.

The grader's memory watch (:func:`.runner.execute`) polls the kernel's resident memory five times a second, so a
submission that allocates fast can take far more than its limit between two polls, and the machine with it. A cgroup
memory limit cannot be outrun: the Linux kernel reclaims, then kills, inside the group the moment it is full. The
grader makes one child cgroup per kernel run, writes the limit, starts the kernel's command through
:func:`join_prefix` (a shell that moves itself into the group, then ``exec``s bubblewrap or the launcher, so the
kernel and everything it starts are inside), and removes the group after the run:

- **cgroup v2**: in this process's own cgroup, if it is writable (delegated to this user, or the namespace's root, as
  for root in a container) and offers the memory controller to its children (``cgroup.subtree_control``, enabled
  here where it can be): ``memory.max``, and ``memory.swap.max = 0``;
- **cgroup v1**: in this process's group of the ``memory`` hierarchy, if it is writable (root, usually):
  ``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes`` as well where swap is accounted.

Where neither is possible (no write access, macOS), :func:`find_hierarchy` says why and the watch alone holds the
limit.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from itertools import count
from pathlib import Path

_NAMES = count()


@dataclass(frozen=True)
class MemoryHierarchy:
    """Where the grader may make memory-limited cgroups: ``parent`` (a folder of a cgroup filesystem), v1 or v2."""

    version: int
    parent: Path


def _mounts(mountinfo: Path) -> list[tuple[str, Path, str, set[str]]]:
    """(mount root, mount point, filesystem type, super options) of each line of ``/proc/self/mountinfo``."""
    found = []
    for line in mountinfo.read_text().splitlines():
        before, _, after = line.partition(" - ")
        fields, rest = before.split(), after.split()
        if len(fields) >= 5 and len(rest) >= 3:
            found.append((fields[3], Path(fields[4]), rest[0], set(rest[2].split(","))))
    return found


def _inside(mount_root: str, mount_point: Path, own: str) -> Path:
    """The folder of cgroup ``own`` (a path in the hierarchy) in a mount of that hierarchy whose root is
    ``mount_root``."""
    relative = os.path.relpath(own, mount_root) if mount_root != "/" else own.lstrip("/")
    return mount_point if relative in ("", ".") else mount_point / relative


def _v2(folder: Path) -> str | None:
    """None if memory-limited children can be made in the cgroup v2 ``folder``, else why not (enables the memory
    controller for its children where it is offered but not yet enabled)."""
    try:
        offered = (folder / "cgroup.controllers").read_text().split()
    except OSError:
        return f"cannot read {folder / 'cgroup.controllers'}"
    if "memory" not in offered:
        return f"the cgroup v2 group {folder} offers {' '.join(offered) or 'no controller'}, not memory"
    if not os.access(folder, os.W_OK):
        return f"the cgroup v2 group {folder} is not writable (not delegated to this user)"
    control = folder / "cgroup.subtree_control"
    try:
        if "memory" not in control.read_text().split():
            control.write_text("+memory")
    except OSError as err:  # a non-root group with processes in it may not pass controllers on (EBUSY)
        return f"cannot enable the memory controller for children of {folder}: {err.strerror or err}"
    return None


def find_hierarchy(
    mountinfo: Path = Path("/proc/self/mountinfo"), membership: Path = Path("/proc/self/cgroup")
) -> tuple[MemoryHierarchy | None, str]:
    """Where this process may make memory-limited cgroups (v2 first, then v1's memory hierarchy), or None; and what
    was found, for the grader's report."""
    try:
        mounts = _mounts(mountinfo)
        groups = [line.split(":", 2) for line in membership.read_text().splitlines() if line.count(":") >= 2]
    except OSError as err:
        return None, f"cannot read {err.filename} (cgroups are Linux's)"
    reasons = []
    own_v2 = next((path for number, names, path in groups if number == "0" and names == ""), None)
    v2 = next(((root, point) for root, point, kind, _ in mounts if kind == "cgroup2"), None)
    if v2 is not None and own_v2 is not None:
        folder = _inside(*v2, own_v2)
        why = _v2(folder)
        if why is None:
            return MemoryHierarchy(2, folder), f"cgroup v2 group {folder}"
        reasons.append(why)
    own_v1 = next((path for _, names, path in groups if "memory" in names.split(",")), None)
    v1 = next(
        ((root, point) for root, point, kind, options in mounts if kind == "cgroup" and "memory" in options), None
    )
    if v1 is not None and own_v1 is not None:
        folder = _inside(*v1, own_v1)
        if folder.is_dir() and os.access(folder, os.W_OK) and (folder / "memory.limit_in_bytes").exists():
            return MemoryHierarchy(1, folder), f"cgroup v1 memory group {folder}"
        reasons.append(f"the cgroup v1 memory group {folder} is not writable")
    return None, "; ".join(reasons) or "no cgroup hierarchy with the memory controller"


class MemoryCgroup:
    """One child cgroup of ``hierarchy`` limited to ``limit_mb``, swap included; :meth:`close` kills what is left in
    it and removes it. Made by the grader for each kernel run::

        with MemoryCgroup(hierarchy, 3072) as group:
            start(join_prefix(group.procs) + command)
            ...
            group.oom_killed()
    """

    def __init__(self, hierarchy: MemoryHierarchy, limit_mb: int, name: str | None = None) -> None:
        if not isinstance(limit_mb, int) or limit_mb < 1:
            raise ValueError(f"limit_mb must be a positive number of megabytes; got {limit_mb!r}")
        self.version = hierarchy.version
        self.folder = hierarchy.parent / (name or f"course-grading-{os.getpid()}-{next(_NAMES)}")
        self.folder.mkdir()
        limit = str(limit_mb * 2**20)
        try:
            if self.version == 2:
                (self.folder / "memory.max").write_text(limit)
                if (self.folder / "memory.swap.max").exists():
                    (self.folder / "memory.swap.max").write_text("0")
            else:
                (self.folder / "memory.limit_in_bytes").write_text(limit)
                if (self.folder / "memory.memsw.limit_in_bytes").exists():  # swap accounted: memory + swap, same cap
                    (self.folder / "memory.memsw.limit_in_bytes").write_text(limit)
        except OSError:
            self.folder.rmdir()
            raise

    @property
    def procs(self) -> Path:
        """The file a process writes its PID into to join the group."""
        return self.folder / "cgroup.procs"

    def pids(self) -> list[int]:
        try:
            return [int(pid) for pid in self.procs.read_text().split()]
        except OSError:
            return []

    def oom_killed(self) -> bool:
        """Whether the Linux kernel killed a process in the group for going over its limit."""
        events = self.folder / ("memory.events" if self.version == 2 else "memory.oom_control")
        try:
            counts = dict(line.split() for line in events.read_text().splitlines() if len(line.split()) == 2)
        except OSError:
            return False
        return int(counts.get("oom_kill", 0)) > 0

    def close(self) -> None:
        """Kill every process still in the group, then remove it (a group empties a moment after its last kill)."""
        for _ in range(50):
            left = self.pids()
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        raise OSError(f"could not remove the grading cgroup {self.folder}: processes {self.pids()} are still in it")

    def __enter__(self) -> MemoryCgroup:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def join_prefix(procs: Path | str) -> list[str]:
    """A command prefix that moves itself into the cgroup whose ``cgroup.procs`` is ``procs``, then ``exec``s the rest
    of the command line, so that the rest and everything it starts run inside the group."""
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(procs)]
