import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// The softphone is served from the binary: `/` sends browsers to it,
    /// its files come with their types and a policy that lets the page
    /// reach only this server, and `webrtc.phone: false` turns it off.
    @Suite("SignalingIntegration: the phone page", .blocking)
    struct PhonePageTests {
        @Test("/ redirects to /phone/, which serves the page with its security headers")
        func servesThePage() throws {
            let h = try Harness()
            defer { h.finish() }
            for path in ["/", "/phone"] {
                let redirect = try h.rest("GET", path, apiKey: nil)
                #expect(
                    redirect.status == 302 && redirect.response.header("Location") == "/phone/", "\(path): \(redirect)")
            }
            let page = try h.rest("GET", "/phone/", apiKey: nil)
            #expect(page.status == 200)
            #expect(page.response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.response.bodyText.hasPrefix("<!doctype html>"))
            let policy = try #require(page.response.header("Content-Security-Policy"))
            #expect(policy.contains("default-src 'self'") && policy.contains("connect-src 'self';"))
            #expect(page.response.header("X-Content-Type-Options") == "nosniff")
            let index = try h.rest("GET", "/phone/index.html", apiKey: nil)
            #expect(index.response.body == page.response.body)

            let missing = try h.rest("GET", "/phone/nothing.js", apiKey: nil)
            #expect(missing.status == 404 && missing.errorCode == "ERR_NOT_FOUND")
            #expect(try h.rest("GET", "/phone/../config.json", apiKey: nil).status == 404)
        }

        @Test("every file the page names is served, with a type a browser runs")
        func everyReferencedFileIsServed() throws {
            let h = try Harness()
            defer { h.finish() }
            let page = try h.rest("GET", "/phone/", apiKey: nil).response.bodyText
            var names: [String] = []
            for attribute in ["src=\"", "href=\""] {
                var rest = Substring(page)
                while let start = rest.range(of: attribute) {
                    rest = rest[start.upperBound...]
                    guard let end = rest.firstIndex(of: "\"") else { break }
                    let name = String(rest[..<end])
                    if !name.contains(":") && !name.hasPrefix("#") { names.append(name) }
                }
            }
            for name in names {
                let file = try h.rest("GET", "/phone/" + name.replacingOccurrences(of: "./", with: ""), apiKey: nil)
                #expect(file.status == 200, "\(name): \(file.status)")
                let type = file.response.header("Content-Type") ?? ""
                #expect(
                    type.hasPrefix("text/javascript") || type.hasPrefix("text/css") || type.hasPrefix("image/"),
                    "\(name): \(type)")
            }
        }

        @Test("webrtc.phone: false serves no page, but still the JavaScript client")
        func canBeTurnedOff() throws {
            let h = try Harness { $0.webrtc.phonePage = false }
            defer { h.finish() }
            #expect(try h.rest("GET", "/phone/", apiKey: nil).status == 404)
            #expect(try h.rest("GET", "/", apiKey: nil).status == 404)
            #expect(try h.rest("GET", "/client/ringd-client.js", apiKey: nil).status == 200)
        }

        @Test("/client/ serves ringd-client.js and its types to any origin, and nothing else")
        func servesTheClient() throws {
            let h = try Harness()
            defer { h.finish() }
            let module = try h.rest("GET", "/client/ringd-client.js", apiKey: nil)
            #expect(module.status == 200)
            #expect(module.response.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(module.response.header("Access-Control-Allow-Origin") == "*")
            #expect(module.response.bodyText.contains("export class RingdClient"))
            let types = try h.rest("GET", "/client/ringd-client.d.ts", apiKey: nil)
            #expect(types.status == 200)
            #expect(types.response.header("Content-Type") == "application/typescript; charset=utf-8")
            #expect(types.response.bodyText.contains("export declare class RingdClient"))
            for path in ["/client/main.js", "/client/", "/client/nothing.js"] {
                #expect(try h.rest("GET", path, apiKey: nil).status == 404, "\(path)")
            }
        }
    }
}
