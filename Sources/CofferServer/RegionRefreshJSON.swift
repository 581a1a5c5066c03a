import CofferSyncAPI
import Foundation
import NIOCore

/// The body of `POST /v1/region-refresh`, written by hand.
///
/// The bytes are exactly those `WireJSON.encoder()` writes for the same `RegionRefreshResponse` (sorted keys, absent
/// optionals left out, numbers in their shortest form, the date in ISO 8601); the tests hold the two equal byte for
/// byte. It exists because `JSONEncoder` took a fifth of the server's CPU under a region-refresh load (`coffer-bench
/// places`), the busiest authenticated endpoint.
enum RegionRefreshJSON {
    static func body(_ response: RegionRefreshResponse) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 128 + response.regions.count * 256)
        buffer.writeStaticString(#"{"cache_ttl_seconds":"#)
        buffer.writeString(String(response.cacheTTLSeconds))
        buffer.writeStaticString(#","refresh_after_meters":"#)
        buffer.writeString(String(response.refreshAfterMeters))
        buffer.writeStaticString(#","regions":["#)
        for (index, region) in response.regions.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeInteger(UInt8(ascii: "{"))
            if let address = region.address {
                buffer.writeStaticString(#""address":"#)
                JSONBytes.writeString(address, into: &buffer)
                buffer.writeInteger(UInt8(ascii: ","))
            }
            buffer.writeStaticString(#""distance_meters":"#)
            JSONBytes.writeNumber(region.distanceMeters, into: &buffer)
            buffer.writeStaticString(#","id":"#)
            JSONBytes.writeString(region.id, into: &buffer)
            buffer.writeStaticString(#","lat":"#)
            JSONBytes.writeNumber(region.lat, into: &buffer)
            buffer.writeStaticString(#","lon":"#)
            JSONBytes.writeNumber(region.lon, into: &buffer)
            buffer.writeStaticString(#","name":"#)
            JSONBytes.writeString(region.name, into: &buffer)
            if let networkID = region.networkID {
                buffer.writeStaticString(#","network_id":"#)
                JSONBytes.writeString(networkID, into: &buffer)
            }
            if let networkName = region.networkName {
                buffer.writeStaticString(#","network_name":"#)
                JSONBytes.writeString(networkName, into: &buffer)
            }
            buffer.writeStaticString(#","priority":"#)
            buffer.writeString(String(region.priority))
            buffer.writeStaticString(#","radius_meters":"#)
            buffer.writeString(String(region.radiusMeters))
            buffer.writeInteger(UInt8(ascii: "}"))
        }
        buffer.writeStaticString(#"],"server_time":"#)
        JSONBytes.writeString(response.serverTime.formatted(.iso8601), into: &buffer)
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }
}
