extension PostgresSchema {
    /// Schema migration 11: what a cluster transition reads, in one call
    /// (docs/CLUSTER.md, "How it works"; ``PostgresTransitionRead``).
    static let transitionFunctions = """
        -- PostgresConnection.lockKey in SQL: FNV-1a over the uid's
        -- UTF-8 bytes, as a signed 64-bit number (numeric, as bigint
        -- arithmetic would overflow), so that locks taken here and
        -- by the nodes are the same locks, in the same order.
        CREATE OR REPLACE FUNCTION ringd_lock_key(uid text) RETURNS bigint
        LANGUAGE plpgsql IMMUTABLE STRICT AS $$
        DECLARE
            bytes bytea := convert_to(uid, 'UTF8');
            hash numeric := 14695981039346656037;
            low int;
        BEGIN
            FOR i IN 0 .. length(bytes) - 1 LOOP
                low := mod(hash, 256)::int;
                hash := mod(
                    (hash - low + (low # get_byte(bytes, i))) * 1099511628211, 18446744073709551616);
            END LOOP;
            IF hash >= 9223372036854775808 THEN hash := hash - 18446744073709551616; END IF;
            RETURN hash::bigint;
        END $$;

        -- What a cluster transition reads, in one call (docs/CLUSTER.md,
        -- "How it works"): locks p_users, the parties of p_session and of
        -- their live calls in the order of their lock keys, then returns
        -- rows of text as the nodes' own queries return it, tagged by
        -- row_kind (decoded by PostgresTransitionRead.swift):
        --   retry    a live call names a user not locked (c0): nothing
        --            else; roll back and call again with those users
        --   locked   c0 a user locked
        --   call     a live call of a locked user, by seq
        --   stored   p_session's call when it is not live
        --   device   c0..c4 uid, device, node, loop, connection: presence on
        --            nodes whose lease of p_lease_ms holds, and p_kept_node's
        --   grace    c0, c1 a user's grace timer generation
        --   seq      c0 the first of the transition's change positions
        --   user     a locked user's users row, with p_read_users
        --   placed   c0 when p_initiator placed a call since p_placed_since,
        --            the newest p_initiate_limit, oldest first
        --   retried  p_initiator's call placed with p_client_call, live or
        --            still within its ring time at p_now
        -- Plain statements only, no SQL-language helpers: PL/pgSQL keeps
        -- the plans of its statements for the session, where a SQL
        -- function plans again at every call.
        CREATE OR REPLACE FUNCTION ringd_transition(
            p_users text[], p_session text, p_lease_ms bigint, p_kept_node bigint, p_read_users boolean,
            p_initiator text, p_client_call text, p_initiate_limit int, p_placed_since bigint, p_now bigint)
        RETURNS TABLE (
            c0 text, c1 text, c2 text, c3 text, c4 text, c5 text, c6 text, c7 text, c8 text, c9 text,
            c10 text, c11 text, c12 text, c13 text, c14 text, c15 text, c16 text, c17 text, c18 text,
            c19 text, c20 text, c21 text, c22 text, row_kind text)
        LANGUAGE plpgsql
        -- Its statements' parameters (arrays of a few uids) make
        -- custom plans look better, so each statement would be
        -- planned again at every call; the generic plans use the
        -- same indexes, at a third of the function's time.
        SET plan_cache_mode = force_generic_plan
        AS $$
        DECLARE
            wanted text[] := coalesce(p_users, '{}');
            needed text[];
            lock_key bigint;
        BEGIN
            IF p_session IS NOT NULL THEN
                -- A call's parties never change: read unlocked.
                wanted := wanted || ARRAY(
                    SELECT unnest(ARRAY[initiator, receiver]) FROM calls WHERE session_id = p_session);
            END IF;
            -- With the parties of their live calls, read unlocked as a guess.
            SELECT coalesce(array_agg(DISTINCT u), '{}') INTO wanted FROM (
                SELECT unnest(wanted) u
                UNION ALL SELECT unnest(ARRAY[c.initiator, c.receiver]) FROM calls c
                WHERE (c.status = 'initiated' OR c.status = 'ongoing')
                    AND (c.initiator = ANY(wanted) OR c.receiver = ANY(wanted))) parties;
            FOR lock_key IN SELECT DISTINCT ringd_lock_key(u) FROM unnest(wanted) u ORDER BY 1 LOOP
                PERFORM pg_advisory_xact_lock(lock_key);
            END LOOP;
            -- Again under the locks: each statement sees what committed
            -- before it (read committed, a volatile function).
            SELECT coalesce(array_agg(DISTINCT u), '{}') INTO needed FROM (
                SELECT unnest(wanted) u
                UNION ALL SELECT unnest(ARRAY[c.initiator, c.receiver]) FROM calls c
                WHERE (c.status = 'initiated' OR c.status = 'ongoing')
                    AND (c.initiator = ANY(wanted) OR c.receiver = ANY(wanted))) parties;
            IF NOT needed <@ wanted THEN
                RETURN QUERY SELECT u,
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'retry'
                    FROM unnest(needed) u;
                RETURN;
            END IF;
            RETURN QUERY SELECT u,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'locked'
                FROM unnest(wanted) u;
            -- The columns of PostgresConnection.callColumns, in its order.
            RETURN QUERY SELECT
                    c.session_id, c.call_type, c.status, c.initiator, c.receiver, c.initiator_device,
                    c.initiated_at::text, c.accepted_at::text, c.ended_at::text, c.accepted_by, c.ended_by,
                    c.end_reason, c.timeout_ms::text, c.metadata, c.change_seq::text, c.reject_reason,
                    c.ringing_devices, c.initiator_name, c.initiator_avatar_url, c.receiver_name,
                    c.receiver_avatar_url, CASE WHEN c.silent THEN 't' ELSE 'f' END, c.client_call_id, 'call'
                FROM calls c WHERE (c.status = 'initiated' OR c.status = 'ongoing')
                    AND (c.initiator = ANY(wanted) OR c.receiver = ANY(wanted))
                ORDER BY c.seq;
            RETURN QUERY SELECT
                    c.session_id, c.call_type, c.status, c.initiator, c.receiver, c.initiator_device,
                    c.initiated_at::text, c.accepted_at::text, c.ended_at::text, c.accepted_by, c.ended_by,
                    c.end_reason, c.timeout_ms::text, c.metadata, c.change_seq::text, c.reject_reason,
                    c.ringing_devices, c.initiator_name, c.initiator_avatar_url, c.receiver_name,
                    c.receiver_avatar_url, CASE WHEN c.silent THEN 't' ELSE 'f' END, c.client_call_id,
                    'stored'
                FROM calls c
                WHERE c.session_id = p_session AND c.status <> 'initiated' AND c.status <> 'ongoing';
            RETURN QUERY SELECT p.uid, p.device_id, p.node_id::text, p.loop::text, p.connection::text,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL, NULL, NULL, NULL, NULL, NULL, 'device'
                FROM presence p JOIN nodes n ON n.node_id = p.node_id
                WHERE p.uid = ANY(wanted) AND (p.node_id = p_kept_node OR (NOT n.dead
                    AND n.renewed_at >= (extract(epoch FROM clock_timestamp()) * 1000)::bigint - p_lease_ms));
            RETURN QUERY SELECT t.subject, t.generation::text,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'grace'
                FROM timers t WHERE t.kind = 'grace' AND t.subject = ANY(wanted);
            RETURN QUERY SELECT nextval('change_seq')::text,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'seq';
            IF p_read_users THEN
                RETURN QUERY SELECT s.uid, s.name, s.avatar_url, s.metadata, s.dnd_mode, s.dnd_until::text,
                        s.updated_at::text,
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                        NULL, NULL, NULL, NULL, 'user'
                    FROM users s WHERE s.uid = ANY(wanted);
            END IF;
            IF p_initiate_limit > 0 THEN
                RETURN QUERY SELECT placed.initiated_at::text,
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'placed'
                    FROM (
                        SELECT c.initiated_at FROM calls c
                        WHERE c.initiator = p_initiator AND c.initiated_at > p_placed_since
                        ORDER BY c.initiated_at DESC LIMIT p_initiate_limit) placed
                    ORDER BY placed.initiated_at;
            END IF;
            IF p_client_call IS NOT NULL THEN
                RETURN QUERY SELECT
                        c.session_id, c.call_type, c.status, c.initiator, c.receiver, c.initiator_device,
                        c.initiated_at::text, c.accepted_at::text, c.ended_at::text, c.accepted_by,
                        c.ended_by,
                        c.end_reason, c.timeout_ms::text, c.metadata, c.change_seq::text, c.reject_reason,
                        c.ringing_devices, c.initiator_name, c.initiator_avatar_url, c.receiver_name,
                        c.receiver_avatar_url, CASE WHEN c.silent THEN 't' ELSE 'f' END, c.client_call_id,
                        'retried'
                    FROM calls c
                    WHERE c.initiator = p_initiator AND c.client_call_id = p_client_call
                        AND (c.status = 'initiated' OR c.status = 'ongoing'
                            OR c.initiated_at + c.timeout_ms > p_now)
                    ORDER BY c.initiated_at DESC LIMIT 1;
            END IF;
        END $$;
        """
}
