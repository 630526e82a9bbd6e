import Foundation
import Missive
import Testing

@testable import AcmeMessages

@Test func anOrderDecodesAndShowsItsDigest() throws {
    let content = #"{"orderID":"A-1042","total":{"amount":"42.50","currency":"EUR"},"items":[{"sku":"maki-8","qty":2}]}"#
    let order = try OrderMessage(decoding: Data(content.utf8))
    #expect(order.digest == "[Order] A-1042, 42.50 EUR")
    #expect(order.searchableWords == ["A-1042", "maki-8"])
    #expect(OrderMessage.persistence == .counted)
    #expect(order.track().absoluteString == "https://shop.acme.example/orders/A-1042")
}

@Test func aHostDecodesTheTypeAsItWouldFromThePlugin() throws {
    // The type registered in a host's registry, compiled in: no .so is built or loaded.
    var builder = MessageRegistry.Builder()
    try builder.register(OrderMessage.self)
    let registry = builder.build()
    let line = #"{"id":"m1","conversationID":"c","senderID":"shop","sentAt":1,"objectName":"MS:Custom","#
        + #""content":{"businessID":"order","orderID":"A-7","total":{"amount":"9.90","currency":"EUR"},"items":[]}}"#
    let message = try registry.decode(line: Array(line.utf8))
    #expect(message.isKnown)
    #expect(message.digest == "[Order] A-7, 9.90 EUR")
    #expect(throws: (any Error).self) { try OrderMessage(decoding: Data(#"{"orderID":"A-7"}"#.utf8)) }
}
