"""Which files dbio may rely on when it runs with more privilege than the server (pure checks)."""

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from dbio import readback, trust
from dbio.managed.lock import describe_holder

ME = os.geteuid()
OTHER = 4242 if ME != 4242 else 4343


def _st(uid: int, mode: int, gid: int = 0) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, gid, 0, 0, 0, 0))


@pytest.mark.parametrize("uid, mode, gid, problem", [
    (ME, stat.S_IFREG | 0o644, 0, None),
    (0, stat.S_IFDIR | 0o755, 0, None),
    (OTHER, stat.S_IFREG | 0o644, 0, "is owned by"),
    (ME, stat.S_IFREG | 0o646, 0, "is writable by every user"),
    (ME, stat.S_IFDIR | 0o775, 1000, "is writable by its group"),
    (ME, stat.S_IFDIR | 0o775, 0, None),  # root's group
])
def test_entry_problem(uid, mode, gid, problem):
    found = trust.entry_problem(_st(uid, mode, gid), frozenset({0, ME}), frozenset({0}))
    assert (found is None) if problem is None else (problem in found)


def test_a_group_the_process_is_a_member_of_may_write_only_when_it_does_not_run_as_root():
    kubelet = _st(0, stat.S_IFDIR | stat.S_ISGID | 0o775, 65532)  # a volume prepared for fsGroup 65532
    assert trust.entry_problem(kubelet, frozenset({0, 65532}), frozenset({0, 65532})) is None
    assert trust.entry_problem(kubelet, frozenset({0, 65532}), frozenset({0, 100})) == "is writable by its group"
    assert trust.entry_problem(_st(0, stat.S_IFDIR | 0o777, 65532), frozenset({0}), frozenset({65532})) == \
        "is writable by every user"  # the group's rule is the group's only
    if ME == 0:
        assert trust.trusted_gids() == frozenset({0})  # root's supplementary groups are not trusted
    else:
        assert trust.trusted_gids() == frozenset({0, os.getegid()})  # not its supplementary groups


@pytest.mark.skipif(ME != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to act as another user")
def test_the_kubelet_s_fsgroup_volume_is_trusted_by_its_pod_s_user_and_refused_by_root():
    """The pod's user, running as fsGroup (the manifests set runAsGroup to it), accepts the results volume
    the kubelet prepared (root-owned, group fsGroup, 2775); with fsGroup only a supplementary group (as
    `users` is on a shared machine) it does not, nor does a user outside it, nor root."""
    from tests.kube_pods import pod_python

    try:
        python, paths = pod_python(65532, 65534)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    base = Path(tempfile.mkdtemp(prefix="dbio-trust-", dir="/var/tmp"))  # pytest's tmp_path: 0700, root's
    try:
        base.chmod(0o755)
        volume = base / "results"
        volume.mkdir()
        os.chown(volume, 0, 65532)
        volume.chmod(0o2775)
        script = ("import sys; from pathlib import Path; from dbio import trust; "
                  "print(trust.path_problem(Path(sys.argv[1]) / 'run-1'))")

        def as_user(group: int, supplementary: int = 65534) -> str:
            command = ["setpriv", "--reuid=65532", f"--regid={group}", f"--groups={supplementary}", "sh", "-c",
                       'exec "$0" -c "$1" "$2"', python, script, str(volume)]
            return subprocess.run(command, capture_output=True, text=True, check=True,
                                  env={**paths, "PATH": "/usr/bin:/bin"}).stdout.strip()

        assert as_user(65532) == "None"
        assert as_user(65534, supplementary=65532) == f"{volume} is writable by its group"
        assert as_user(4242) == f"{volume} is writable by its group"
        assert trust.path_problem(volume / "run-1") == f"{volume} is writable by its group"  # as root: strict
        volume.chmod(0o2777)
        assert as_user(65532) == f"{volume} is writable by every user"
        # an account whose login group others log in with too (Debian's nobody, with _apt and sync in
        # nogroup): running as it, the group is nobody's choice, and a volume of that group is refused
        os.chown(volume, 0, 65534)
        volume.chmod(0o2775)
        shared = [p.pw_name for p in pwd.getpwall() if p.pw_gid == 65534 and p.pw_uid != 65534]
        if pwd.getpwuid(65534).pw_gid == 65534 and shared:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
                       'exec "$0" -c "$1" "$2"', python, script, str(volume)]
            seen = subprocess.run(command, capture_output=True, text=True, check=True,
                                  env={**paths, "PATH": "/usr/bin:/bin"}).stdout.strip()
            assert seen == f"{volume} is writable by its group", shared
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("gid, login, listed, others, trusted", [
    (65532, None, (), (), True),  # no account for the uid: the runtime set the group (a pod's runAsGroup)
    (2000, ("alice", 1000), (), (), True),  # not the login group: chosen (sg team, newgrp)
    (1000, ("alice", 1000), (), (), True),  # a personal login group (Debian's user private groups)
    (1000, ("alice", 1000), ("alice",), (), True),  # listing herself changes nothing
    (100, ("alice", 100), (), ("bob", "carol"), False),  # 'users': everyone's login group
    (1000, ("alice", 1000), ("alice", "mallory"), (), False),  # someone else listed in it
])
def test_the_group_a_user_runs_as_is_trusted_when_chosen_or_personal(gid, login, listed, others, trusted):
    assert trust.group_is_chosen_or_personal(gid, login, listed, others) is trusted


def test_a_path_through_a_sticky_world_writable_directory_is_trusted_only_below_a_trusted_entry(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine = sticky / "mine"
    mine.mkdir()
    assert trust.path_problem(mine / "file-to-be") is None
    assert "is writable by every user" in trust.path_problem(sticky)  # the sticky directory itself as the target
    plain = tmp_path / "open"
    plain.mkdir()
    plain.chmod(0o777)
    (plain / "x").mkdir()
    assert trust.path_problem(plain / "x") == f"{plain} is writable by every user"


@pytest.mark.skipif(ME != 0, reason="needs root to give a file to another user")
def test_a_tree_with_a_file_another_user_owns_is_refused_naming_it(tmp_path):
    tmp_path.chmod(0o755)
    tree = tmp_path / "install" / "bin"
    tree.mkdir(parents=True)
    program = tree / "pg_ctl"
    program.write_text("#!/bin/sh\n")
    assert trust.tree_problem(tmp_path / "install") is None
    os.chown(program, OTHER, OTHER)
    assert trust.tree_problem(tmp_path / "install") == f"{program} is owned by uid {OTHER}"
    os.chown(program, 0, 0)
    (tree / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("")
    os.chown(tmp_path / "elsewhere", OTHER, OTHER)
    assert "(through the link" in trust.tree_problem(tmp_path / "install")


def test_write_for_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep")
    planted = tmp_path / "dbio.conf"
    planted.symlink_to(target)
    trust.write_for(planted, "new settings\n", ME, os.getegid())
    assert target.read_text() == "keep"
    assert not planted.is_symlink() and planted.read_text() == "new settings\n"
    assert stat.S_IMODE(planted.stat().st_mode) == 0o600


def test_read_no_follow_refuses_a_link(tmp_path):
    (tmp_path / "secret").write_text("s")
    (tmp_path / "log").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        trust.read_no_follow(tmp_path / "log")


@pytest.mark.parametrize("text, shown", [
    ('{"command": "run", "pid": 123, "since": 0}', "dbio run (pid 123, since 1970-01-01 00:00:00 UTC)"),
    ("", "another dbio command"),
    ('{"command": "run"}', "another dbio command"),
    ('{"command": "run", "pid": "x", "since": 1e400}', "another dbio command"),
])
def test_describe_holder(text, shown):
    assert describe_holder(text) == shown


def test_a_configuration_file_is_followed_through_a_link_only_in_a_directory_nobody_else_may_change(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text("[workload]\nupdate_pct = 5\n")
    (tmp_path / "link.toml").symlink_to(mine)
    assert trust.read_trusted(tmp_path / "link.toml", readback.CONFIGURATION) == mine.read_bytes()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: another user could point the link anywhere, or swap it
    (shared / "dbio.toml").symlink_to(mine)
    with pytest.raises(trust.UntrustedFile, match="is a link in a directory other users may change"):
        trust.read_trusted(shared / "dbio.toml", readback.CONFIGURATION)


def test_results_go_only_where_nobody_else_may_change_the_path(tmp_path):
    from dbio import results_dir
    from dbio.errors import UsageError

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UsageError, match="is writable by every user"):
        results_dir.check(shared / "results")
    results_dir.check(tmp_path / "results")  # a path of one's own is fine


def test_a_directory_made_for_results_is_proved_before_anything_is_written(tmp_path):
    from dbio.errors import UsageError

    trust.make_private_directory(tmp_path / "a" / "b", "the run's result")
    assert (tmp_path / "a" / "b").is_dir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "planted").symlink_to(victim)
    with pytest.raises(FileExistsError):  # a link (or anything) already at the path is never used
        trust.make_private_directory(tmp_path / "planted", "the run's result")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UsageError, match="refusing to write the run's result"):
        trust.make_private_directory(shared / "run", "the run's result")


def test_an_instance_directory_that_appears_as_a_link_meanwhile_is_refused_untouched(tmp_path):
    from dbio.errors import UsageError
    from dbio.managed.location import claim_directory

    victim = tmp_path / "victim"
    (victim / "log").mkdir(parents=True)
    victim.chmod(0o755)
    (tmp_path / "inst").symlink_to(victim)  # put there after the location was checked
    with pytest.raises(UsageError, match="changed while dbio was creating the instance"):
        claim_directory(tmp_path / "inst")
    assert (victim / "log").is_dir() and stat.S_IMODE(victim.stat().st_mode) == 0o755
    full = tmp_path / "filled"
    full.mkdir()
    (full / "someone-elses").write_text("x")  # a directory that was empty at the check, not now
    with pytest.raises(UsageError, match="is no longer empty"):
        claim_directory(full)
    assert (full / "someone-elses").exists()


def test_a_link_in_a_directory_others_may_change_is_not_trusted_whatever_it_points_to(tmp_path):
    safe = tmp_path / "safe"
    safe.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "results").symlink_to(safe)  # its owner could point it elsewhere at any time
    assert trust.path_problem(safe) is None
    assert trust.path_problem(shared / "results") == f"{shared} is writable by every user"
    (tmp_path / "alias").symlink_to(safe)  # a link in a trusted directory is fine
    assert trust.path_problem(tmp_path / "alias" / "run") is None


@pytest.mark.skipif(ME != 0, reason="needs root to give a link to another user")
def test_a_link_another_user_made_in_a_sticky_directory_is_not_trusted(tmp_path):
    tmp_path.chmod(0o755)
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    target = tmp_path / "roots"
    target.mkdir()
    link = sticky / "N"  # made after dbio resolved its paths, to be swapped once dbio has checked
    link.symlink_to(target)
    os.lchown(link, OTHER, OTHER)
    assert trust.path_problem(link / "results") == f"{link} is a link owned by uid {OTHER}"
    os.lchown(link, 0, 0)  # only root could swap it now
    assert trust.path_problem(link / "results") is None


def test_output_is_never_written_into_a_pipe_or_a_hard_link(tmp_path):
    pipe = tmp_path / "report.html"
    os.mkfifo(pipe)
    with pytest.raises(OSError):  # at once (no reader: ENXIO; a reader: not a plain file), never hanging
        trust.write_output(pipe, "report")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.link(victim, tmp_path / "out.txt")
    with pytest.raises(OSError, match="hard link"):
        trust.write_output(tmp_path / "out.txt", "report")
    assert victim.read_text() == "keep"
    trust.write_output(tmp_path / "fresh.txt", "report")
    assert (tmp_path / "fresh.txt").read_text() == "report"


def test_tree_bytes_counts_allocated_space_once_per_file(tmp_path):
    from dbio.filesystem import tree_bytes

    sparse = tmp_path / "sparse"
    with sparse.open("wb") as fh:
        fh.truncate(1 << 40)  # a terabyte that takes no space
    data = tmp_path / "data"
    data.write_bytes(b"x" * (1 << 20))
    for n in range(5):
        os.link(data, tmp_path / f"name{n}")
    assert (1 << 20) <= tree_bytes(tmp_path) < (2 << 20)


@pytest.mark.parametrize("reader", [
    "from dbio.engines.postgres.instance.as_server import log_tail_of as tail",
    "from dbio.engines.mysql.instance.process import log_tail as tail",
])
def test_a_server_log_the_server_user_made_huge_is_read_bounded(tmp_path, reader):
    """The server user owns its log: made a sparse file of gigabytes, root's `dbio instance start` that
    read it whole for the last error ended in "internal error: MemoryError" (or took the machine's
    memory). Read in a program whose memory is bounded, the last error is still found."""
    import subprocess
    import sys

    log = tmp_path / "server.log"
    with log.open("wb") as fh:
        fh.truncate(4 * 1024 ** 3)  # sparse: no room taken on disk
        fh.seek(0, 2)
        fh.write(b"\n2026-11-27 12:00:00 UTC FATAL:  [ERROR] invalid value for parameter \"work_mem\"\n")
    code = f"{reader}\nimport resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (2 ** 30, 2 ** 30))\n" \
           f"print(tail(__import__('pathlib').Path(sys.argv[1])))"
    done = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-300:]
    assert done.stdout.strip().endswith('invalid value for parameter "work_mem"'), done.stdout[-300:]
