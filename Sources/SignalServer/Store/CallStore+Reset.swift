extension CallStore {
    /// Empties every table but the change sequence's counter in one
    /// transaction, after every job queued before (the test API's reset);
    /// blocks until done. The schema stays.
    func reset() throws(StoreError) {
        try wait(writes: true) { connection throws(StoreError) in
            try reportingSQLiteErrors { () throws(SQLiteError) in
                let database = connection.database
                // Every table the schema has now, so a table a later migration adds is emptied too.
                let listing = try database.statement(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
                defer { listing.reset() }
                var tables: [String] = []
                while try listing.step() == .row { if let name = listing.string(at: 0) { tables.append(name) } }
                try database.execute("PRAGMA defer_foreign_keys = ON")
                // The change sequence goes on (counters stay): positions are never handed out twice.
                for table in tables where table != "counters" { try database.execute("DELETE FROM \"\(table)\"") }
            }
        }
    }
}
