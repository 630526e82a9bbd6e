import Foundation
import PackagePlugin

/// `swift package missive-check [--product NAME]... [missive check options]`
///
/// Builds the package's dynamic library products (or the ones named with `--product`) and runs
/// `missive check` on them. Every other argument goes to `missive check` unchanged. All the logic lives in
/// the `missive` tool and the MissiveConformance library; this plugin only builds and runs.
@main
struct MissiveCheckPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let wanted = extractor.extractOption(named: "product")
        let dynamicProducts = context.package.products.compactMap { $0 as? LibraryProduct }.filter { $0.kind == .dynamic }
        let products = wanted.isEmpty ? dynamicProducts : dynamicProducts.filter { wanted.contains($0.name) }
        let unknown = Set(wanted).subtracting(products.map(\.name))
        guard unknown.isEmpty else {
            throw CheckPluginError("no dynamic library product named \(unknown.sorted().joined(separator: ", ")) in \(context.package.displayName)")
        }
        guard !products.isEmpty else { throw CheckPluginError("\(context.package.displayName) has no dynamic library products to check") }

        var files: [String] = []
        for product in products {
            let result = try packageManager.build(.product(product.name), parameters: .init(configuration: .debug, echoLogs: true))
            guard result.succeeded else { throw CheckPluginError("building \(product.name) failed") }
            files += result.builtArtifacts.filter { $0.kind == .dynamicLibrary }.map(\.url.path)
        }

        let tool = try context.tool(named: "missive")
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["check"] + files + extractor.remainingArguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("missive check exited with code \(process.terminationStatus)")
            throw CheckPluginError("conformance checks did not pass")
        }
    }
}

struct CheckPluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
