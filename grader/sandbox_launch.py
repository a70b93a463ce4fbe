"""Enter the grading sandbox, then exec a command (the learner's kernel) inside it.

Run as ``python -I -S sandbox_launch.py SPEC.json -- COMMAND...`` by ``grader.sandbox``, already
inside fresh mount, network and PID namespaces (``unshare``), as root there (real root, or root of a
new user namespace); the zygote (``grader.zygote``) calls the same functions in a forked kernel.
Standard library only (and ``processes``, loaded from beside this file): it must start in
milliseconds, and it runs before anything learner-controlled exists.

Steps: a private tmpfs becomes the new root; only the paths in the spec are bound into it, read-only
(the Python installation, the virtual environment, the grading packages, /usr and /etc), plus the
one read-write folder the kernel talks through; the submission is copied into a home on the tmpfs;
``pivot_root`` detaches the old root; resource limits are set; privileges are dropped for good
(another uid, or no capabilities at all); then COMMAND replaces this process.
"""

import ctypes
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

if __package__:
    from . import processes
else:  # a script, run with -I -S: no package and no sys.path entry to find one by
    _spec = importlib.util.spec_from_file_location(
        "processes", Path(__file__).with_name("processes.py"))
    processes = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(processes)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
# statvfs f_flag bits that a read-only remount of a bind must keep (same values as MS_*)
KEPT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | (1 << 21)  # + [no|rel][dir]atime
DEVICES = ("null", "zero", "full", "random", "urandom")

PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
libc = ctypes.CDLL(None, use_errno=True)


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def mount(source, target, fstype, flags, data=None) -> None:
    encode = lambda value: value.encode() if isinstance(value, str) else value  # noqa: E731
    _check(libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)),
           f"mount {source} on {target}")


def bind(source: str, target: str, *, writable: bool = False) -> None:
    """Bind ``source`` at ``target`` (created as needed), read-only unless ``writable``."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    mount(source, target, None, MS_BIND | MS_REC)
    kept = os.statvfs(target).f_flag & KEPT_FLAGS
    mount(None, target, None,
          MS_BIND | MS_REMOUNT | MS_NOSUID | kept | (0 if writable else MS_RDONLY))


def build_root(spec: dict) -> None:
    root = spec["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={spec['tmpfs_size']}")
    for path in spec["read_only"]:
        if not os.path.lexists(path):
            continue
        target = root + path
        if os.path.islink(path):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(os.readlink(path), target)
        else:
            bind(path, target)
    for path in spec["read_write"]:
        bind(path, root + path, writable=True)
    os.makedirs(f"{root}/dev/shm", exist_ok=True)
    os.chmod(f"{root}/dev/shm", 0o1777)
    for name in DEVICES + tuple(spec.get("devices", ())):
        if os.path.exists(f"/dev/{name}"):
            target = f"{root}/dev/{name}"
            open(target, "a").close()
            mount(f"/dev/{name}", target, None, MS_BIND)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(link, f"{root}/dev/{name}")
    os.makedirs(f"{root}/proc")
    mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.makedirs(f"{root}/tmp", exist_ok=True)
    os.chmod(f"{root}/tmp", 0o1777)
    home, work = root + spec["home"], root + spec["work"]
    shutil.copytree(spec["work_source"], work, symlinks=True)
    for relative, source in spec.get("copy_into_home", {}).items():
        os.makedirs(os.path.dirname(os.path.join(home, relative)), exist_ok=True)
        shutil.copyfile(source, os.path.join(home, relative))
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is not None:
        for folder in [home, *spec["read_write"]]:
            target = folder if folder.startswith(root) else root + folder
            for directory, _, files in os.walk(target):
                os.chown(directory, uid, gid)
                for name in files:
                    os.chown(os.path.join(directory, name), uid, gid, follow_symlinks=False)


def enter_root(root: str) -> None:
    """pivot_root into ``root`` and detach the old root, so no path leads back out."""
    os.chdir(root)
    os.makedirs(".old-root", exist_ok=True)
    _check(libc.syscall(155, b".", b".old-root"), "pivot_root")  # SYS_pivot_root on x86-64
    os.chroot(".")
    os.chdir("/")
    _check(libc.umount2(b"/.old-root", MNT_DETACH), "umount old root")
    os.rmdir("/.old-root")


def drop_privileges(uid, gid) -> None:
    """Give up root for good: another uid when we have one, and never any capability back."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for capability in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    # No capability left now either (root of a user namespace keeps them otherwise, and a kernel
    # forked by the zygote never goes through the execve that would drop them).
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = CapHeader(0x20080522, 0), (CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3
    _check(libc.capset(ctypes.byref(header), data), "capset")
    # A change of uid clears the parent-death signal: arm it again, so the kernel (PID 1 of its
    # namespace, taking every process it started with it) dies with whoever launched it.
    processes.die_with_parent()


def main(argv: list[str]) -> None:
    separator = argv.index("--")
    with open(argv[1]) as handle:
        spec = json.load(handle)
    command = argv[separator + 1:]
    build_root(spec)
    enter_root(spec["root"])
    processes.set_limits(spec["limits"])
    drop_privileges(spec.get("uid"), spec.get("gid"))
    os.chdir(spec["work"])
    os.execve(command[0], command, spec["env"])


if __name__ == "__main__":
    main(sys.argv)
