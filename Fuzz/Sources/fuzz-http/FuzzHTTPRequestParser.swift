import FuzzSupport
import SignalProtocol

// Input: one byte choosing the chunk size, then the bytes of a connection.
// The stream is parsed whole and in chunks; the parser claims to be correct
// for any split, so both must give the same requests and the same error.
// Small limits so that short inputs reach them.

let maxHeaderBytes = 512
let maxBodyBytes = 128

/// A request's observable parts, comparable across splits.
struct ParsedRequest: Equatable {
    var method: String
    var target: String
    var minorVersion: Int
    var headers: [String]
    var body: [UInt8]
}

/// The requests parsed from a stream, then the error if there was one.
struct ParseOutcome: Equatable {
    var requests: [ParsedRequest] = []
    var error: String?
}

func parse(_ chunks: [ArraySlice<UInt8>]) -> ParseOutcome {
    var parser = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var outcome = ParseOutcome()
    for chunk in chunks {
        parser.append(contentsOf: chunk)
        do {
            while let request = try parser.next() { outcome.requests.append(checked(request)) }
        } catch {
            require([400, 413, 431, 501, 505].contains(error.status.code), "unexpected status \(error)")
            outcome.error = error.description
            return outcome
        }
    }
    return outcome
}

func checked(_ request: HTTPRequest) -> ParsedRequest {
    require(request.body.count <= maxBodyBytes, "a \(request.body.count)-byte body passed the limit")
    let headers = request.headers.map { "\($0.name): \($0.value)" }
    // Scalars, not UTF-8 bytes: each invalid byte decodes to one U+FFFD of three.
    let headBytes =
        request.method.unicodeScalars.count + request.target.unicodeScalars.count
        + request.headers.reduce(0) { $0 + $1.name.unicodeScalars.count + $1.value.unicodeScalars.count }
    require(headBytes <= maxHeaderBytes, "a head of at least \(headBytes) bytes passed the limit")
    // What routing reads from every request.
    _ = request.path
    _ = request.query
    _ = request.keepAlive
    return ParsedRequest(
        method: request.method, target: request.target, minorVersion: request.minorVersion,
        headers: headers, body: request.body)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = inputBytes(data, size)
    guard let first = input.first else { return 0 }
    let stream = input.dropFirst()
    let whole = parse([stream])
    let split = parse(chunks(stream, size: chunkSize(first)))
    require(whole == split, "the split changed the outcome: \(whole) vs \(split)")
    return 0
}
