extension CallStore {
    /// Empties every table but the change sequence's counter in one
    /// transaction, after every job queued before (the test API's reset);
    /// blocks until done. The schema stays.
    func reset() throws(StoreError) {
        try wait(writes: true) { connection throws(StoreError) in
            let database = connection.database
            // Every table the schema has now, so a table a later migration adds is emptied too.
            let tables = try database.fetchAll(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ) { row in row.string(0) }
            try database.executeScript("PRAGMA defer_foreign_keys = ON")
            // The change sequence goes on (counters stay): positions are never handed out twice.
            for table in tables where table != "counters" { try database.executeScript("DELETE FROM \"\(table)\"") }
        }
    }
}
