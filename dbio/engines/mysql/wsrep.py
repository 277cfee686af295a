"""A MariaDB Galera node as the MySQL engine sees it (wsrep on): what it is, and what dbio keeps local.

Every node of a Galera cluster takes writes, and every node applies every write-set: a run's
sessions UPDATE on each. What dbio itself writes to steer a run (its control row, the barrier's
locks, the work loop's procedures) belongs to each node alone, as it would on separate servers:
the control connection turns replication off for its own session (wsrep_on is a session
variable), so that the nodes' rows of one run never meet in certification."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbio.errors import UsageError

SYNCED = "Synced"
ACCESS_DENIED = 1227  # ER_SPECIFIC_ACCESS_DENIED_ERROR
# How long the loop waits for its node to be in a primary component again before an UPDATE (a node lost, the
# others forming the cluster again: Galera's evs.suspect_timeout is 5 s); past it the session ends, naming quorum
NONPRIMARY_SECONDS = 30
SETTING = "galera_node"  # not a server variable: the node's NodeState, kept among the probed settings


@dataclass(frozen=True)
class NodeState:
    """What a Galera node says of itself and its cluster."""

    node: str  # its wsrep_node_name
    state: str  # wsrep_local_state_comment: Synced, Donor/Desynced, Joining, ...
    cluster: str  # wsrep_cluster_state_uuid: the same on every node of one cluster
    size: int  # wsrep_cluster_size: the nodes in its primary component
    status: str  # wsrep_cluster_status: Primary (has quorum) or non-Primary

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "state": self.state, "cluster": self.cluster, "size": self.size,
                "status": self.status}


def state_of(variables: dict[str, str], status: dict[str, str]) -> NodeState | None:
    """The node's state from its variables and status (pure); None when wsrep is off (not a Galera node)."""
    if str(variables.get("wsrep_on", "OFF")).upper() != "ON":
        return None
    try:
        size = int(status.get("wsrep_cluster_size") or 0)
    except ValueError:
        size = 0
    return NodeState(str(variables.get("wsrep_node_name") or ""), str(status.get("wsrep_local_state_comment") or ""),
                     str(status.get("wsrep_cluster_state_uuid") or ""), size,
                     str(status.get("wsrep_cluster_status") or ""))


def read_state(conn: Any) -> NodeState | None:
    variables = dict(conn.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_node_name')"))
    if str(variables.get("wsrep_on", "OFF")).upper() != "ON":
        return None
    status = dict(conn.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', "
                             "'wsrep_cluster_state_uuid', 'wsrep_cluster_size', 'wsrep_cluster_status')"))
    return state_of(variables, status)


def check_ready(state: NodeState | None, where: str) -> None:
    """A node that is not Synced in a primary component is refused before a run: its figures would be
    a transfer's or a partition's, not the cluster's."""
    if state is None:
        return
    if state.status != "Primary":
        raise UsageError(f"{where} is a Galera node without quorum (wsrep_cluster_status {state.status or 'unknown'})",
                         "start the cluster's other nodes, or bootstrap it again from the most advanced node")
    if state.state != SYNCED:
        raise UsageError(f"{where} is a Galera node in state {state.state or 'unknown'}, not Synced",
                         "wait until it is Synced (SHOW STATUS LIKE 'wsrep_local_state_comment') and run again")


# the neutral writesets counters (engines/counters.py) and the status each is
WRITESETS = {"replicated": "wsrep_replicated", "replicated_bytes": "wsrep_replicated_bytes",
             "received": "wsrep_received", "received_bytes": "wsrep_received_bytes",
             "cert_failures": "wsrep_local_cert_failures", "bf_aborts": "wsrep_local_bf_aborts",
             "replays": "wsrep_local_replays", "flow_control_paused_ns": "wsrep_flow_control_paused_ns",
             "flow_control_sent": "wsrep_flow_control_sent", "flow_control_recv": "wsrep_flow_control_recv",
             "last_committed": "wsrep_last_committed"}
GAUGES = {"recv_queue": "wsrep_local_recv_queue", "send_queue": "wsrep_local_send_queue",
          "cluster_size": "wsrep_cluster_size"}
# Galera's status read with the rest at every sample: only what the counters use. A server built with wsrep but
# not a node shows some of them too, with values no reading takes (wsrep_local_index 2^64 - 1, refused as out of
# any real figure's range: run/readings.refused), so nothing else of wsrep's is read.
STATUS = tuple(WRITESETS.values()) + tuple(GAUGES.values())


def writesets(status: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, float]] | None:
    """(the cumulative write-set counters, the queue and size gauges) of one reading of a Galera node's
    status, lower-cased as stats.read keeps it (pure); None when it is no Galera node's."""
    def number(name: str) -> float | None:
        value = status.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    if number("wsrep_replicated") is None:
        return None
    # "nodes": one, so that the counters of a cluster's nodes added up (counters.combine) say how many they are
    return ({key: number(name) for key, name in WRITESETS.items()} | {"nodes": 1.0},
            {key: value for key, name in GAUGES.items() if (value := number(name)) is not None})


def read_anyway(conn: Any) -> None:
    """A session of a Galera node reads while the node is outside a primary component (a node lost, the
    cluster forming again): its SELECTs read the node's own pages, which is what dbio measures."""
    conn.execute("SET SESSION wsrep_dirty_reads = ON")


def keep_local(conn: Any) -> bool:
    """On a Galera node, this session's writes stay on it (the run's control row and loop); True when
    it is one. Setting wsrep_on needs the privilege to set session variables that replicate (SUPER)."""
    import pymysql

    rows = dict(conn.query("SHOW GLOBAL VARIABLES WHERE Variable_name = 'wsrep_on'"))
    if str(rows.get("wsrep_on", "OFF")).upper() != "ON":
        return False
    try:
        conn.execute("SET SESSION wsrep_on = OFF")
    except pymysql.err.OperationalError as exc:
        if exc.args and exc.args[0] == ACCESS_DENIED:
            raise UsageError(f"the user {conn.dsn.user or '(default)'} may not set wsrep_on for its own session, which "
                             "dbio needs on a Galera node to keep each node's run control to itself",
                             "GRANT SUPER ON *.* TO that user (MariaDB), or run as a user that has it") from None
        raise
    return True
