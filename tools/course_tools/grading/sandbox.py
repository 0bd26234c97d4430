"""Start a grading kernel inside limits: memory, file size, and (on Linux) a Landlock filesystem sandbox.

    python -I -S /path/to/course_tools/grading/sandbox.py POLICY.json -- <kernel command>

applies the policy to this process and then ``exec``s the kernel command, which inherits it. The grader runs this
file by its path (:func:`launcher`), not as ``-m course_tools.grading.sandbox``, which would import all of
``course_utils`` (torch with it) in every launcher only to ``exec`` the kernel a moment later: this file imports
nothing but the standard library, and ``-I -S`` keep the folder it lies in and ``site`` out of the way.

Landlock (Linux ≥ 5.13, no privileges needed) lets the kernel read everything except the ``deny`` paths (the
instructor's notebooks and their repository, the submissions, the grade table) and write only beneath the
``writable`` paths (its own scratch folder, caches). ``readable`` re-opens parts of a denied tree for reading (the
installed course package, the virtual environment). Where Landlock is missing the kernel still runs with its
file-size limit (and the grader's memory watch), and ``landlock_abi()`` returning 0 tells the grader to say so
(:mod:`.isolation` reports what each platform offers).

Where bubblewrap works, the grader starts this launcher inside ``bwrap`` (:mod:`.bubblewrap`, named by
:attr:`Policy.bubblewrap`): a mount namespace built from the same policy, with this launcher's limits (and Landlock,
where the kernel offers it) applied inside it.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Landlock's filesystem rights (include/uapi/linux/landlock.h) and the ABI version that introduced each.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the only rights a rule on a non-directory may carry
_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1


@dataclass
class Policy:
    """What a grading kernel may use; written as JSON by the grader, read by the launcher."""

    memory_mb: int | None = None  # address-space limit (RLIMIT_AS)
    file_size_mb: int = 1024  # largest file the kernel may write
    deny: list[str] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)
    readable: list[str] = field(default_factory=list)
    landlock: bool = True  # apply Landlock here, where the kernel offers it
    bubblewrap: str | None = None  # the bwrap program the grader starts this launcher in (None: not in one)
    cgroup_parent: str | None = None  # where the grader makes each kernel's memory-limited cgroup (None: no cgroup)
    cgroup_version: int = 0  # 1 or 2 where there is one
    cgroup_procs: str | None = None  # this kernel run's group: the launcher starts inside it (set per run)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, path: Path) -> Policy:
        return cls(**json.loads(Path(path).read_text()))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers, 0 where there is none (other OS, old or disabled)."""
    numbers = _SYSCALLS.get(platform.machine())
    if sys.platform != "linux" or numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def handled_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def around(denied: list[Path], root: Path = Path("/")) -> list[Path]:
    """Paths whose subtrees together cover ``root`` (the whole filesystem by default) except the ``denied`` subtrees."""
    denied = [Path(os.path.realpath(d)) for d in denied]
    root = Path(os.path.realpath(root))
    if any(d == root or d in root.parents for d in denied):
        return []
    if not any(root in d.parents for d in denied):
        return [root]
    cover: list[Path] = []

    def walk(folder: Path) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if path in denied or entry.is_symlink():  # a rule on a link covers its target: reach targets by real paths
                continue
            if any(path in d.parents for d in denied) and entry.is_dir(follow_symlinks=False):
                walk(path)
            else:
                cover.append(path)

    walk(root)
    return cover


def restrict_filesystem(policy: Policy) -> int:
    """Apply the policy's Landlock rules to this process (and its future children); returns the ABI used (0: none)."""
    abi = landlock_abi()
    if abi == 0:
        return 0
    create, add_rule, restrict = _SYSCALLS[platform.machine()]
    libc = _libc()
    handled = handled_rights(abi)
    attr = ctypes.c_uint64(handled)
    ruleset = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    def allow(path: Path, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # vanished or unreadable: nothing to allow
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                rights &= FILE_RIGHTS
            rule = PathBeneath(rights & handled, fd)
            if (
                libc.syscall(
                    add_rule,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
                < 0
            ):
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    denied = [Path(os.path.realpath(d)) for d in policy.deny]

    def beneath(path: str) -> list[Path]:
        """Where a rule for ``path`` goes: the path itself, or, when denied trees lie inside it, everything beneath
        it around them (a rule on the path would re-open them whole: a checkout inside ~/.cache must not make the
        rest of the cache read-only, nor the checkout writable). A path inside a denied tree re-opens that part.
        Landlock grants a folder's rights to its whole subtree, so the folders on the way to a denied tree get no
        rule of their own: what already exists beside the denied tree is writable, but nothing new can be created
        directly in those folders (the grader creates the cache folders kernels need before it starts them)."""
        real = Path(os.path.realpath(path))
        if any(real == d for d in denied):
            return []
        return around([d for d in denied if real in d.parents], real)

    try:
        for path in around(denied):
            allow(path, READ)
        for path in policy.readable:
            for target in beneath(path):
                allow(target, READ)
        for path in policy.writable:
            for target in beneath(path):
                allow(target, handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(restrict, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def apply_limits(policy: Policy) -> None:
    """Memory and file-size limits; a too-large write then fails with an error instead of killing the kernel."""
    if policy.memory_mb:
        limit = int(policy.memory_mb) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    size = int(policy.file_size_mb) * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def launcher(policy_file: Path | str, command: list[str]) -> list[str]:
    """The command that runs ``command`` under the policy saved in ``policy_file``: this file, run by its path with
    this interpreter in isolated mode (``-I``: no ``PYTHON*`` variables, no user site, no script folder on the path)
    and without ``site`` (``-S``: no ``.pth`` file runs), so nothing but the standard library is imported before the
    ``exec``. The kernel it execs is a fresh interpreter with its usual path and environment."""
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve()), str(policy_file), "--", *command]


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit(f"usage: {sys.executable} -I -S {Path(__file__).resolve()} POLICY.json -- <command> [args…]")
    policy, command = Policy.load(Path(argv[0])), argv[2:]
    if policy.landlock:
        restrict_filesystem(policy)
    apply_limits(policy)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
