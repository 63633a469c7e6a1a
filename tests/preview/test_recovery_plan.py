"""`gpu-inference recover`'s planning (components/preview/recovery.py) on the shapes Pulumi writes:
lock files (`diy/lock.go`), exported deployments (`apitype.DeploymentV3`), the command lines of a
run's processes (`plugin.go`, `pulumi-language-python` `constructArguments`), Helm's records."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest

from components.model.deploy.helm_records import Record, marker_of_urn
from components.model.deploy.runs import RunRecord
from components.preview import recovery as rc

ROOT = "/work/proj"
T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC).timestamp()

# A lock file as the DIY backend writes it: Go's time.Time marshals RFC 3339 with nanoseconds.
LOCK_JSON = '{"pid":4242,"username":"ci","hostname":"runner-7","timestamp":"2026-11-30T11:00:00.123456789+01:00"}'


def test_a_lock_file_reads_as_pid_user_host_and_time():
    lock = rc.parse_lock(LOCK_JSON, "locks/x.json")
    assert lock == rc.Lock("locks/x.json", 4242, "ci", "runner-7", T0 + 0.123456)


@pytest.mark.parametrize(
    "text", ["", "{", '{"pid": 1}', '{"pid":"x","username":"u","hostname":"h","timestamp":"t"}']
)
def test_anything_else_is_not_a_lock(text):
    assert rc.parse_lock(text, "x") is None


def test_the_lock_directories_of_a_stack_in_both_diy_layouts():
    assert rc.lock_dirs("gpu-inference", "organization/gpu-inference/dev") == [
        ".pulumi/locks/organization/gpu-inference/dev",
        ".pulumi/locks/dev",
    ]


def proc(pid, argv, started=T0 + 10, uid=1000, ppid=1):
    return rc.Proc(pid, ppid, uid, started, tuple(argv))


LOCK = rc.Lock("l", 4242, "ci", "runner-7", T0)


@pytest.mark.parametrize(
    "host, running, state",
    [
        ("runner-7", proc(4242, ["pulumi", "up"], started=T0 - 3), "live"),
        # The clock of /proc's start times is whole seconds: within the slack is the same CLI.
        ("runner-7", proc(4242, ["pulumi", "up"], started=T0 + 1.5), "live"),
        # The pid taken by a later process: the CLI that wrote the lock is gone.
        ("runner-7", proc(4242, ["bash"], started=T0 + 60), "gone"),
        ("runner-7", None, "gone"),
        # Another machine's lock cannot be checked from here.
        ("laptop", proc(4242, ["pulumi", "up"], started=T0 - 3), "elsewhere"),
    ],
)
def test_whether_the_lock_holder_still_runs(host, running, state):
    procs = {running.pid: running} if running else {}
    assert rc.lock_holder(LOCK, procs, host).state == state


# The processes of two stacks of one project, run from the same directory, whose CLIs were
# killed: each run's plugins carry its engine address, the program its stack.
LANG = "/home/u/.pulumi/bin/pulumi-language-python"
K8S = "/home/u/.pulumi/plugins/resource-kubernetes-v4.34.2/pulumi-resource-kubernetes"
EXEC = "/home/u/.pulumi/bin/pulumi-language-python-exec"


def program(pid, engine, stack, root=ROOT, project="gpu-inference"):
    return proc(
        pid,
        ["/venv/bin/python", "-u", EXEC, "--monitor", "127.0.0.1:1", "--engine", engine,
         "--project", project, "--root_directory", root, "--stack", stack, "--pwd", root,
         "--dry_run", "false", "--parallel", "16", "--organization", "organization", "."],
    )  # fmt: skip


A, B, C = "127.0.0.1:40001", "127.0.0.1:40002", "127.0.0.1:40003"
PROCS = [
    proc(101, [LANG, "-root=" + ROOT, A]),
    proc(102, [K8S, A]),
    proc(201, [LANG, "-root=" + ROOT, B]),
    program(202, B, "prod"),
    proc(203, [K8S, B]),
    # Stack dev again, a run still going on (its engine listens).
    proc(301, [K8S, C]),
    program(302, C, "dev"),
    # Another user's process with the same address: never ours to stop.
    proc(401, [K8S, A], uid=0),
    # An unrelated process mentioning the address only inside an argument.
    proc(501, ["curl", f"http://{A}/"]),
]
RECORD_A = RunRecord("gpu-inference", "dev", ROOT, A, 100, T0)


def runs_of(stack, records=(RECORD_A,), listening=frozenset(), root=ROOT):
    runs = rc.stack_runs(PROCS, records, set(listening), "gpu-inference", stack, root, 1000)
    return [(r.engine, r.source, r.live, [p.pid for p in r.procs]) for r in runs]


def test_a_run_is_found_by_its_record_even_with_its_program_gone():
    assert runs_of("dev") == [
        (A, "run record", False, [101, 102]),
        (C, "program", False, [301, 302]),
    ]


def test_the_other_stack_of_the_same_directory_is_never_in_this_stacks_runs():
    assert runs_of("prod") == [(B, "program", False, [201, 202, 203])]
    assert runs_of("organization/gpu-inference/prod") == runs_of("prod")


def test_a_run_whose_engine_listens_is_live():
    assert runs_of("dev", listening={40003}) == [
        (A, "run record", False, [101, 102]),
        (C, "program", True, [301, 302]),
    ]


def test_a_program_naming_the_project_directory_through_a_symlink_is_of_the_stack():
    linked = [program(302, C, "dev", root="/link/proj")]
    runs = rc.stack_runs(linked, (), set(), "gpu-inference", "dev", ROOT, 1000, lambda p: ROOT)
    assert [(r.engine, [p.pid for p in r.procs]) for r in runs] == [(C, [302])]
    assert rc.stack_runs(linked, (), set(), "gpu-inference", "dev", ROOT, 1000) == []


def test_records_of_another_directory_or_project_tie_nothing():
    moved = RunRecord("gpu-inference", "dev", "/elsewhere", A, 100, T0)
    other = RunRecord("other-project", "dev", ROOT, A, 100, T0)
    assert runs_of("dev", records=(moved, other)) == [(C, "program", False, [301, 302])]
    # The same stack name in another checkout of the project is another stack.
    assert runs_of("dev", records=(), root="/elsewhere") == []


# An exported deployment (`pulumi stack export --show-secrets`) of a run killed while one Helm
# release was being created and another upgraded: the shapes of apitype.DeploymentV3.
PROVIDER_URN = "urn:pulumi:dev::gpu-inference::pulumi:providers:kubernetes::cluster"
STACK_URN = "urn:pulumi:dev::gpu-inference::pulumi:pulumi:Stack::gpu-inference-dev"
DP_URN = (
    "urn:pulumi:dev::gpu-inference::gpu-inference:index:Platform$kubernetes:helm.sh/v3:"
    "Release::nvidia-device-plugin"
)
SELDON_URN = (
    "urn:pulumi:dev::gpu-inference::gpu-inference:index:Platform$kubernetes:helm.sh/v3:"
    "Release::seldon-core-v2-setup"
)
NS_URN = "urn:pulumi:dev::gpu-inference::kubernetes:core/v1:Namespace::models"
SECRET = {
    rc.SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270",
    "plaintext": json.dumps("/home/u/.kube/lab.yaml"),
}
DEPLOYMENT = {
    "manifest": {"time": "2026-11-30T10:00:00Z", "magic": "x", "version": "v3.274.1"},
    "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:x"}},
    "resources": [
        {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"},
        {
            "urn": PROVIDER_URN,
            "custom": True,
            "id": "0b5c4e7a-1111-2222-3333-444455556666",
            "type": "pulumi:providers:kubernetes",
            "inputs": {"kubeconfig": SECRET, "context": "lab-admin", "version": "4.34.2"},
            "outputs": {"kubeconfig": SECRET, "context": "lab-admin", "version": "4.34.2"},
        },
        {
            "urn": DP_URN,
            "custom": True,
            "id": "kube-system/nvidia-device-plugin",
            "type": "kubernetes:helm.sh/v3:Release",
            "inputs": {"name": "nvidia-device-plugin", "namespace": "kube-system", "chart": "c"},
            "outputs": {"name": "nvidia-device-plugin", "namespace": "kube-system"},
            "provider": f"{PROVIDER_URN}::0b5c4e7a-1111-2222-3333-444455556666",
        },
    ],
    "pending_operations": [
        {
            "resource": {
                "urn": SELDON_URN,
                "custom": True,
                "type": "kubernetes:helm.sh/v3:Release",
                "inputs": {"name": "seldon-core-v2-setup", "namespace": "seldon-mesh"},
                "provider": f"{PROVIDER_URN}::0b5c4e7a-1111-2222-3333-444455556666",
            },
            "type": "creating",
        },
        {
            "resource": {"urn": NS_URN, "custom": True, "type": "kubernetes:core/v1:Namespace"},
            "type": "creating",
        },
        {
            "resource": {
                "urn": DP_URN,
                "custom": True,
                "id": "kube-system/nvidia-device-plugin",
                "type": "kubernetes:helm.sh/v3:Release",
                "inputs": {"name": "nvidia-device-plugin", "namespace": "kube-system"},
                "provider": f"{PROVIDER_URN}::0b5c4e7a-1111-2222-3333-444455556666",
            },
            "type": "updating",
        },
    ],
    "metadata": {},
}


def test_pending_operations_of_a_checkpoint():
    ops = rc.pending_operations(DEPLOYMENT)
    assert [(o.kind, o.type, o.name) for o in ops] == [
        ("creating", "kubernetes:helm.sh/v3:Release", "seldon-core-v2-setup"),
        ("creating", "kubernetes:core/v1:Namespace", "models"),
        ("updating", "kubernetes:helm.sh/v3:Release", "nvidia-device-plugin"),
    ]
    assert rc.pending_operations({"resources": []}) == []


def test_each_helm_release_with_its_providers_cluster_and_pending_operation():
    kube = "/home/u/.kube/lab.yaml"
    assert rc.helm_releases(DEPLOYMENT) == [
        rc.Release(DP_URN, "nvidia-device-plugin", "kube-system", kube, "lab-admin", "updating"),
        rc.Release(
            SELDON_URN, "seldon-core-v2-setup", "seldon-mesh", kube, "lab-admin", "creating"
        ),
    ]


def test_a_release_under_a_provider_of_the_ambient_kubeconfig_and_one_being_deleted():
    d = copy.deepcopy(DEPLOYMENT)
    d["resources"][1]["inputs"] = {}
    d["resources"][2]["delete"] = True
    d["pending_operations"] = d["pending_operations"][:1]
    assert rc.helm_releases(d) == [
        rc.Release(SELDON_URN, "seldon-core-v2-setup", "seldon-mesh", None, None, "creating")
    ]


def test_a_secret_value_without_its_plaintext_reads_as_nothing():
    assert rc.plain({rc.SECRET_SIG: "x", "ciphertext": "v1:abc"}) is None
    assert rc.plain({"a": [SECRET, 1]}) == {"a": ["/home/u/.kube/lab.yaml", 1]}


REL = rc.Release(SELDON_URN, "r", "ns", None, None, None)
CREATING = rc.Release(SELDON_URN, "r", "ns", None, None, "creating")
OURS = marker_of_urn(SELDON_URN)


def rec(rev, status, owner=OURS):
    return Record(f"sh.helm.release.v1.r.v{rev}", rev, status, "c", owner)


@pytest.mark.parametrize(
    "release, records, left",
    [
        (CREATING, [rec(1, "pending-install")], ("pending-install", 1)),
        (REL, [rec(1, "deployed"), rec(2, "pending-upgrade")], ("pending-upgrade", 2)),
        # The provider outlived its CLI and finished the install: the state never had it.
        (CREATING, [rec(1, "deployed")], ("deployed", 1)),
        (CREATING, [rec(1, "failed")], ("failed", 1)),
        # A release the state has, deployed: nothing left over.
        (REL, [rec(1, "superseded"), rec(2, "deployed")], None),
        (REL, [], None),
    ],
)
def test_what_a_killed_run_left_of_a_helm_release(release, records, left):
    found = rc.helm_left(release, list(reversed(records)))
    assert (found and (found.status, found.revision, found.foreign)) == (left and (*left, None))


def test_records_without_this_releases_marker_are_reported_as_not_this_stacks():
    found = rc.helm_left(CREATING, [rec(1, "pending-install", owner=None)])
    assert found is not None and found.foreign == (
        "was installed by Helm or another tool (chart c ?, revision 1 pending-install; no "
        "gpu-inference marker)"
    )
    other = marker_of_urn(SELDON_URN.replace("urn:pulumi:dev::", "urn:pulumi:prod::"))
    found = rc.helm_left(CREATING, [rec(1, "pending-install", owner=other)])
    assert found is not None and found.foreign is not None
    assert found.foreign.startswith("belongs to another stack (gpu-inference/prod;")


def findings(**kw):
    return rc.Findings("gpu-inference", "dev", "file:///state", **kw)


GONE = rc.LockHolder(rc.Lock("l.json", 4242, "ci", "runner-7", T0), "gone")
LIVE = rc.LockHolder(rc.Lock("l.json", 4242, "ci", "runner-7", T0), "live")
DEAD_RUN = rc.Run(A, "run record", False, (proc(101, [LANG, A]), proc(102, [K8S, A])))
LIVE_RUN = rc.Run(C, "program", True, (proc(301, [K8S, C]),))


def test_the_plan_after_a_lost_cli_stops_its_plugins_removes_its_lock_and_clears_its_creates():
    f = findings(locks=[GONE], pending=rc.pending_operations(DEPLOYMENT), runs=[DEAD_RUN])
    assert rc.refusal(f) is None
    assert [(s.kind, s.text) for s in rc.plan(f)] == [
        (
            "stop",
            "stop the 2 processes of the interrupted run (101, 102): SIGTERM, then SIGKILL "
            "after 5 s",
        ),
        ("cancel", "remove the stack's lock (`pulumi cancel`)"),
        (
            "clear",
            "drop the 2 pending creates (what they made stays in the cluster; the next `pulumi "
            "up` adopts it); read back the 1 other pending operation: `pulumi refresh "
            "--clear-pending-creates`",
        ),
    ]


def test_a_checkpoint_made_unreadable_by_the_kill_is_repaired_first():
    f = findings(empty_attrs=[".pulumi/stacks/gpu-inference/dev.json.attrs"], locks=[GONE])
    assert [s.kind for s in rc.plan(f)] == ["attrs", "cancel"]


def test_a_backend_whose_locks_cannot_be_read_is_refreshed_to_meet_its_lock():
    f = findings(lock_unknown=True)
    (step,) = rc.plan(f)
    assert step.kind == "clear" and "one whose CLI is not running here is removed" in step.text


def test_nothing_left_plans_nothing():
    assert rc.plan(findings()) == []


def test_a_lock_held_by_a_running_cli_here_is_refused_naming_its_pid():
    reason = rc.refusal(findings(locks=[LIVE], runs=[DEAD_RUN]))
    assert reason is not None
    assert reason.startswith(
        "stack dev is being updated right now: its lock is held by pid 4242 on this host (ci, "
    )
    assert reason.endswith(
        "and that process is running. recover clears what an interrupted run left, not a "
        "running one: let it finish, or stop it (kill 4242) and run recover again"
    )


def test_a_run_whose_engine_still_listens_is_refused():
    assert rc.refusal(findings(runs=[DEAD_RUN, LIVE_RUN])) == (
        f"a run of stack dev is going on: its engine ({C}) still listens, and its processes "
        "(301) are running. Let it finish, or stop its `pulumi` and run recover again"
    )


def test_what_the_findings_say():
    left = rc.HelmLeft(
        CREATING, "pending-install", 1, "Helm refuses the release until this record goes"
    )
    foreign = rc.HelmLeft(
        CREATING, "deployed", 1, "installed ...", "was installed by Helm or another tool (...)"
    )
    f = findings(
        locks=[rc.LockHolder(GONE.lock, "elsewhere")],
        pending=rc.pending_operations(DEPLOYMENT)[:2],
        runs=[DEAD_RUN],
        helm=[left, foreign],
        helm_unchecked=["ns/x: the cluster is not reachable (MaxRetryError: refused)"],
    )
    lines = rc.render_findings(f)
    assert lines[0].startswith("lock: held by pid 4242 on runner-7 (ci, since ")
    assert lines[0].endswith("another host: whether that run is alive cannot be seen from here")
    assert lines[1:] == [
        "pending operations (2 creating):",
        "  creating  kubernetes:helm.sh/v3:Release  seldon-core-v2-setup",
        "  creating  kubernetes:core/v1:Namespace  models",
        f"processes of a run of this stack (engine {A}, found by its run record; its CLI is gone):",
        "  pid 101 pulumi-language-python",
        "  pid 102 pulumi-resource-kubernetes",
        "Helm release ns/r: revision 1 pending-install (Helm refuses the release until this "
        "record goes): its records carry this release's marker; left to the release's error "
        "hook, which clears them on the next `pulumi up` (never the objects)",
        "Helm release ns/r: revision 1 deployed (installed ...): it was installed by Helm or "
        "another tool (...); not proven this stack's, so neither recover nor the release's "
        "error hook clears it: the next `pulumi up` refuses the release",
        "Helm records not checked: ns/x: the cluster is not reachable (MaxRetryError: refused)",
    ]


def test_a_program_process_is_labelled_by_its_script():
    assert program(7, A, "dev").label() == "pid 7 python pulumi-language-python-exec"


@pytest.mark.parametrize(
    "summary, converged, sentence",
    [
        (
            {"same": 41},
            True,
            "converged: `pulumi preview --expect-no-changes` proposes no change to dev",
        ),
        (
            {"same": 30, "create": 10, "update": 1},
            False,
            "not converged: the preview proposes 10 to create, 1 to update. Run `pulumi up -s "
            "dev` to finish what the interrupted run began",
        ),
        ({}, True, "converged: `pulumi preview --expect-no-changes` proposes no change to dev"),
        # Reads of existing objects (`.get`) are no change to `--expect-no-changes` either.
        (
            {"same": 40, "read": 3},
            True,
            "converged: `pulumi preview --expect-no-changes` proposes no change to dev",
        ),
    ],
)
def test_the_verdict_of_the_closing_preview(summary, converged, sentence):
    assert rc.verdict(summary, "dev") == (converged, sentence)
