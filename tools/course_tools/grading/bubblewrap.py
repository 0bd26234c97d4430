"""The bubblewrap launcher: a grading kernel in a mount namespace built from its :class:`.sandbox.Policy`.

Where ``bwrap`` works (:func:`.isolation.probe_bubblewrap`), the grader starts the sandbox launcher inside it:

    bwrap --die-with-parent --cap-drop ALL --ro-bind / / --dev /dev --proc /proc \\
          --bind WRITABLE WRITABLE … --tmpfs DENIED_FOLDER … --ro-bind /dev/null DENIED_FILE … \\
          --ro-bind READABLE READABLE … --remount-ro DENIED_FOLDER … \\
          -- python -I -S …/sandbox.py POLICY.json -- <kernel command>

- the whole filesystem is seen read-only (``--ro-bind / /``), with a fresh ``/dev`` (and the GPUs' device nodes,
  where there are some) and a fresh ``/proc``;
- each ``writable`` path is bound read-write over it;
- each ``deny`` folder is hidden under an empty tmpfs, made read-only once what it re-exposes is mounted in it; each
  denied file is covered by ``/dev/null``, bound without device access, so opening it fails;
- each ``readable`` path inside a denied tree is bound again, read-only, over the tmpfs that hides its parent.

A mount hides what lies beneath it, so the mounts go from the shortest path to the longest, and each path's access is
that of the nearest rule above it, as with Landlock (:func:`.sandbox.restrict_filesystem`): a denied tree inside a
writable one stays hidden, a path inside it that is readable or writable again is bound again. Paths that do not
exist are left out (there is nothing to bind or hide), and paths under ``/dev`` and ``/proc``, which bubblewrap
mounts afresh, too.

``--cap-drop ALL`` matters where the grader runs as root: bubblewrap then keeps every capability by default, and a
kernel with ``CAP_SYS_ADMIN`` could unmount the tmpfs over a denied folder. ``--die-with-parent`` kills the kernel
with the grader. The network is shared, as with Landlock alone (which confines only the filesystem): lessons may
download what they fetch. So are the process IDs: in a PID namespace of its own the kernel's parent would be PID 1,
which ipykernel takes for its parent's death, and exits.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from .cgroups import join_prefix
from .sandbox import Policy, launcher

# What every bubblewrap sandbox here starts from; the probe runs these too.
BASE_OPTIONS = ("--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
FRESH = (Path("/dev"), Path("/proc"))  # bubblewrap mounts new ones: the policy's paths beneath them are left to those
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")  # kept, so a kernel still sees its GPU


def _existing(paths: list[str]) -> set[Path]:
    """The real paths (links resolved, as Landlock's rules are) of those that exist, outside ``/dev`` and ``/proc``."""
    found = set()
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.exists() and not any(real == fresh or fresh in real.parents for fresh in FRESH):
            found.add(real)
    return found


def mount_options(policy: Policy) -> list[str]:
    """The bubblewrap options that apply ``policy``'s ``deny``, ``writable`` and ``readable`` paths over a read-only
    root (see the module's docstring); what a path is decides in that order: a path both denied and writable is
    denied, one both writable and readable is writable (Landlock's rules give the union of both)."""
    denied, writable = _existing(policy.deny), _existing(policy.writable)
    readable = _existing(policy.readable)
    rules = {**{p: "read" for p in readable}, **{p: "write" for p in writable}, **{p: "deny" for p in denied}}
    options: list[str] = []
    hidden: list[Path] = []
    for path in sorted(rules, key=lambda p: (len(p.parts), str(p))):
        rule = rules[path]
        above = next((rules[p] for p in path.parents if p in rules), "read")  # the nearest rule, else the root's
        if rule == "deny" and above != "deny":
            if path.is_dir():
                options += ["--tmpfs", str(path)]
                hidden.append(path)
            else:
                options += ["--ro-bind", "/dev/null", str(path)]
        elif rule == "write" and above != "write":
            options += ["--bind", str(path), str(path)]
        elif rule == "read" and above == "deny":
            options += ["--ro-bind", str(path), str(path)]
    for path in hidden:  # only now: bubblewrap made the mount points of what is bound inside them
        options += ["--remount-ro", str(path)]
    return options


def gpu_options() -> list[str]:
    """``--dev-bind`` for each GPU device node of this machine (NVIDIA, DRI, AMD's KFD), absent from a fresh /dev."""
    return [
        option
        for pattern in GPU_DEVICES
        for node in sorted(glob.glob(pattern))
        for option in ("--dev-bind", node, node)
    ]


def bubblewrap_prefix(policy: Policy, bwrap: str) -> list[str]:
    """``bwrap`` and its options for ``policy``, up to and with the ``--`` before the command it runs."""
    return [bwrap, *BASE_OPTIONS, *gpu_options(), *mount_options(policy), "--"]


def sandboxed_command(policy_file: Path | str, command: list[str]) -> list[str]:
    """The command that starts ``command`` (a kernel) under the policy saved in ``policy_file``: the sandbox launcher
    (:func:`.sandbox.launcher`: its limits, and Landlock where the policy and the kernel allow), inside bubblewrap
    where the policy names a ``bwrap`` (:attr:`.sandbox.Policy.bubblewrap`), all of it started in the run's
    memory-limited cgroup where the policy names one (:func:`.cgroups.join_prefix`; outside bubblewrap, whose
    read-only ``/sys`` would refuse the move)."""
    policy = Policy.load(Path(policy_file))
    inner = launcher(policy_file, command)
    sandboxed = [*bubblewrap_prefix(policy, policy.bubblewrap), *inner] if policy.bubblewrap else inner
    return [*join_prefix(policy.cgroup_procs), *sandboxed] if policy.cgroup_procs else sandboxed
