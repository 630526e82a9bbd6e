import Foundation
import MissivePluginKit

/// An order card from Acme's shop: the order number, its total and what was bought.
@MissiveMessage("acme:order", businessID: "order", persistence: .counted)
struct OrderMessage: Codable, MessageTextContent {
    @MissiveCoding
    struct Money: Codable, Sendable {
        var amount: String
        var currency: String
    }

    @MissiveCoding
    struct Item: Codable, Sendable {
        var sku: String
        var qty: Int
    }

    var orderID: String
    var total: Money
    var items: [Item]

    static var examples: [OrderMessage] {
        [OrderMessage(orderID: "A-1042", total: Money(amount: "42.50", currency: "EUR"), items: [Item(sku: "maki-8", qty: 2)])]
    }

    var digest: String { "[Order] \(orderID), \(total.amount) \(total.currency)" }
    var searchableWords: [String]? { [orderID] + items.map(\.sku) }

    /// The order's page in Acme's shop: a message action that gives a URL for the host to open, shown as a
    /// button under the card.
    @MissiveAction("track", title: "Track order", icon: "shippingbox", priority: 10)
    func track() -> URL {
        URL(string: "https://shop.acme.example/orders/")!.appending(path: orderID)
    }
}

/// How hosts draw an order: a card with its number, one row per item, and the total.
extension OrderMessage: MessageViewContent {
    var view: ViewElement {
        .vstack(spacing: 1) {
            ViewElement.text("Order \(orderID)", role: .title)
            ViewElement.facts(items.map { ViewFact($0.sku, "× \($0.qty)") })
            ViewElement.text("Total: \(total.amount) \(total.currency)", emphasis: .strong)
        }
    }
}

#MissivePlugin(name: "AcmeMessages", version: "1.0.0", vendor: "Acme", types: [OrderMessage.self])
