// The wire types (Call, CallType, JSONValue, PushRegistration, …) are part
// of RingClient's API: an app imports RingKit alone.
@_exported import SignalProtocol
