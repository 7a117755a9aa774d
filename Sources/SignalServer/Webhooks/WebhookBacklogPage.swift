/// How the dispatcher reads the store's backlog a page at a time: how
/// much one read takes, and where the next one starts.
extension WebhookDispatcher {
    /// How many pending rows one read of the store takes when `room` are
    /// wanted: at least one more than a change has deliveries (one per
    /// endpoint), so that a full page always ends past a change's first row.
    func readLimit(_ room: Int) -> Int { max(room, settings.endpoints.count + 1) }

    /// What to hold of a page read with `limit`, and where the next read
    /// starts. A full page may end inside a change (its rows for some
    /// endpoints only): that change is left for the next read, which starts
    /// at it, so none of its rows is skipped. Only a change with more rows
    /// than ``readLimit(_:)`` allows (endpoints since removed from the
    /// configuration) fills a page alone; it is held and the read goes on
    /// after it.
    static func split(_ page: [WebhookDelivery], limit: Int) -> (held: ArraySlice<WebhookDelivery>, next: Int64?) {
        guard page.count >= limit, let last = page.last else { return (page[...], nil) }
        let end = page.firstIndex { $0.seq == last.seq } ?? page.endIndex
        return end > 0 ? (page[..<end], last.seq) : (page[...], last.seq + 1)
    }
}
