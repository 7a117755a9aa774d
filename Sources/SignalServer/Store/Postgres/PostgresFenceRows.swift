/// Fencing a node declared dead (docs/CLUSTER.md, "Failures"): its
/// listening session is found by pid and the random token it carries as
/// its `application_name` (``registerNode(name:)``), both of which
/// `pg_stat_activity` shows every role, and ended when this session's role
/// may end it ("Database roles" in docs/CLUSTER.md).
extension PostgresConnection {
    /// Whether this session may end the sessions of the role `role`
    /// (an oid): those of its own roles, or any but a superuser's with
    /// `pg_signal_backend`, as `pg_terminate_backend` allows.
    private static func mayEnd(role: String) -> String {
        """
        (current_setting('is_superuser') = 'on' OR NOT (SELECT rolsuper FROM pg_roles WHERE oid = \(role)))
        AND (pg_has_role(\(role), 'MEMBER') OR pg_has_role('pg_signal_backend', 'MEMBER'))
        """
    }

    /// Ends the dead `node`'s listening session if it still has one (the
    /// node froze, or is cut off but its connection lingers): its
    /// session locks go with it (the webhook leader's among them), and
    /// when it thaws it finds its connection gone and registers anew. The
    /// session's random token (its `application_name`) tells it from a
    /// later one with the same pid; both are visible to every role. False
    /// when there is such a session and this session's role may not end it.
    func fence(_ node: Int64) throws(PostgresError) -> Bool {
        let rows = try execute(
            """
            SELECT CASE WHEN \(Self.mayEnd(role: "a.usesysid")) THEN pg_terminate_backend(a.pid) ELSE false END
            FROM pg_stat_activity a JOIN nodes n ON a.pid = n.listener_pid AND a.application_name = n.listener_token
            WHERE n.node_id = $1 AND n.dead
            """, [String(node)])
        return rows.count == 0 || rows.string(0, 0) == "t"
    }

    /// The roles of live nodes' listening sessions that this session may
    /// not end: were one of those nodes to freeze, this one could not fence it.
    func rolesBeyondFencing() throws(PostgresError) -> [String] {
        let rows = try execute(
            """
            SELECT DISTINCT a.usename FROM pg_stat_activity a JOIN nodes n
            ON a.pid = n.listener_pid AND a.application_name = n.listener_token
            WHERE NOT n.dead AND NOT (\(Self.mayEnd(role: "a.usesysid")))
            ORDER BY 1
            """)
        return (0 ..< rows.count).compactMap { rows.string($0, 0) }
    }
}
