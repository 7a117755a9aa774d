/// What the app's backend says about a user (`PUT /v1/users/{uid}`): the
/// name and picture the other party's phone shows. Only an API key sets it,
/// so a caller cannot ring as somebody else.
public struct UserProfile: Hashable, Sendable {
    /// The display name, 1 to ``nameLength`` characters.
    public var name: String
    /// An `https` URL of the user's picture.
    public var avatarUrl: String?
    /// The app's own JSON object, kept and returned as given.
    public var metadata: JSONValue?

    public static let nameLength = 1 ... 100
    public static let maxAvatarUrlBytes = 2048

    public init(name: String, avatarUrl: String? = nil, metadata: JSONValue? = nil) throws(SignalError) {
        guard Self.nameLength.contains(name.count), !name.unicodeScalars.contains(where: Self.isControl) else {
            throw SignalError(
                .validation, "name must be \(Self.nameLength.lowerBound) to \(Self.nameLength.upperBound) characters")
        }
        if let avatarUrl { try Self.validate(avatarUrl: avatarUrl) }
        self.name = name
        self.avatarUrl = avatarUrl
        self.metadata = metadata
    }

    /// Parses a `PUT /v1/users/{uid}` body.
    public init(fields: JSONFields) throws(SignalError) {
        let metadata =
            fields.has("metadata")
            ? try ClientFrame.object(fields, "metadata", maxBytes: ClientFrame.maxMetadataBytes) : nil
        try self.init(
            name: try fields.string("name"), avatarUrl: try fields.optionalString("avatarUrl"), metadata: metadata)
    }

    /// The body of `PUT /v1/users/{uid}`: `name`, and `avatarUrl` and `metadata` when set.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("name", .string(name))]
        if let avatarUrl { members.append(("avatarUrl", .string(avatarUrl))) }
        if let metadata { members.append(("metadata", metadata)) }
        return .object(members)
    }

    /// An avatar is shown by phones that fetch it: only `https`, with a
    /// host, no spaces or control characters, and a bounded length.
    private static func validate(avatarUrl: String) throws(SignalError) {
        let bytes = Array(avatarUrl.utf8)
        let scheme = Array("https://".utf8)
        guard bytes.count <= maxAvatarUrlBytes, bytes.count > scheme.count,
            bytes.prefix(scheme.count).map({ $0 | 0x20 }) == scheme.map({ $0 | 0x20 }),
            bytes[scheme.count] != UInt8(ascii: "/"),
            bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
        else {
            throw SignalError(.validation, "avatarUrl must be an https URL of at most \(maxAvatarUrlBytes) bytes")
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value)
    }
}

/// A user's do-not-disturb: `busy` answers new calls as busy, `silent`
/// rings connected devices with `silent: true` and pushes nothing; both
/// keep the missed call in the log.
public enum DoNotDisturbMode: String, Hashable, Sendable, CaseIterable {
    case off, busy, silent
}

/// A do-not-disturb setting, until a time or until changed.
public struct DoNotDisturb: Hashable, Sendable {
    public var mode: DoNotDisturbMode
    /// When it ends by itself (milliseconds since the Unix epoch); nil
    /// while it lasts until changed. Never set with `off`.
    public var until: Int64?

    public init(mode: DoNotDisturbMode, until: Int64? = nil) {
        self.mode = mode
        self.until = mode == .off ? nil : until
    }

    public static let off = DoNotDisturb(mode: .off)

    /// The mode in force at `now`: `off` once `until` has passed.
    public func mode(at now: Int64) -> DoNotDisturbMode {
        if let until, until <= now { return .off }
        return mode
    }

    /// Parses `setDoNotDisturb`'s members (or the REST body): `mode`, and
    /// `until` (not with `off`).
    public init(fields: JSONFields) throws(SignalError) {
        let mode = try fields.enumeration("mode", DoNotDisturbMode.self)
        let until = try fields.optionalInteger("until")
        if let until {
            guard mode != .off else { throw SignalError(.validation, "until does not go with mode off") }
            guard until > 0 else { throw SignalError(.validation, "until must be milliseconds since the Unix epoch") }
        }
        self.init(mode: mode, until: until)
    }

    /// `{"mode"}`, with `until` when set.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("mode", .string(mode.rawValue))]
        if let until { members.append(("until", .integer(until))) }
        return .object(members)
    }
}

/// What ringd keeps about a user: the profile and the do-not-disturb
/// setting, each of which may be unset.
public struct UserRecord: Hashable, Sendable {
    public var uid: String
    public var profile: UserProfile?
    public var doNotDisturb: DoNotDisturb
    /// When the record last changed (milliseconds since the Unix epoch).
    public var updatedAt: Int64

    public init(uid: String, profile: UserProfile? = nil, doNotDisturb: DoNotDisturb = .off, updatedAt: Int64) {
        self.uid = uid
        self.profile = profile
        self.doNotDisturb = doNotDisturb
        self.updatedAt = updatedAt
    }

    /// Whether nothing is set, so that the record need not be kept.
    public var isEmpty: Bool { profile == nil && doNotDisturb.mode == .off }

    /// The wire form (`GET /v1/users/{uid}`): `uid`, the profile's fields
    /// when there is one, `doNotDisturb` and `updatedAt`.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("uid", .string(uid))]
        members += profile?.json.objectMembers ?? []
        members.append(("doNotDisturb", doNotDisturb.json))
        members.append(("updatedAt", .integer(updatedAt)))
        return .object(members)
    }

    public init(json: JSONValue) throws(SignalError) {
        let fields = JSONFields(json)
        uid = try fields.string("uid")
        profile = fields.has("name") ? try UserProfile(fields: fields) : nil
        doNotDisturb = try DoNotDisturb(fields: try fields.nested("doNotDisturb"))
        updatedAt = try fields.integer("updatedAt")
    }
}
