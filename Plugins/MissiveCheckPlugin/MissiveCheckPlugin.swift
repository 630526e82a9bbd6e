import Foundation
import PackagePlugin

/// `swift package missive-check [--product NAME]... [-c debug|release] [missive check options]`
///
/// Builds the package's dynamic library products (or the ones named with `--product`) in the chosen
/// configuration (debug by default; `-c release` checks what you ship) and runs `missive-check` on them.
/// Every other argument goes to `missive-check` unchanged. All the logic lives in the `missive-check` tool (the
/// same checker as `missive check`, without the rest of `missive`) and the MissiveConformance library; this plugin
/// only builds and runs.
@main
struct MissiveCheckPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        // `-c NAME` is SwiftPM's short spelling; ArgumentExtractor knows only `--name` options.
        var rest: [String] = []
        var shortConfigurations: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-c" {
                guard let value = remaining.popFirst() else { throw CheckPluginError("usage: -c needs debug or release") }
                shortConfigurations.append(value)
            } else {
                rest.append(argument)
            }
        }
        var extractor = ArgumentExtractor(rest)
        let wanted = extractor.extractOption(named: "product")
        let configurations = shortConfigurations + extractor.extractOption(named: "configuration")
        let configuration: PackageManager.BuildConfiguration
        switch configurations.last {
        case nil, "debug": configuration = .debug
        case "release": configuration = .release
        case let other?: throw CheckPluginError("usage: --configuration takes debug or release, not '\(other)'")
        }
        let dynamicProducts = context.package.products.compactMap { $0 as? LibraryProduct }.filter { $0.kind == .dynamic }
        let products = wanted.isEmpty ? dynamicProducts : dynamicProducts.filter { wanted.contains($0.name) }
        let unknown = Set(wanted).subtracting(products.map(\.name))
        guard unknown.isEmpty else {
            throw CheckPluginError("usage: no dynamic library product named \(unknown.sorted().joined(separator: ", ")) in \(context.package.displayName)")
        }
        guard !products.isEmpty else { throw CheckPluginError("usage: \(context.package.displayName) has no dynamic library products to check") }

        var files: [String] = []
        for product in products {
            let result = try packageManager.build(.product(product.name), parameters: .init(configuration: configuration, echoLogs: true))
            guard result.succeeded else { throw CheckPluginError("building \(product.name) (\(configuration)) failed") }
            files += result.builtArtifacts.filter { $0.kind == .dynamicLibrary }.map(\.url.path)
        }

        // The checker is built like the products, for the target and in the same build folder, so it reuses the
        // Missive modules those builds compiled. (As a tool dependency of this plugin, SwiftPM would build it, with
        // Missive and its dependencies, a second time for the host.)
        let checker = try packageManager.build(.product("missive-check"), parameters: .init(configuration: configuration, echoLogs: true))
        guard checker.succeeded, let tool = checker.builtArtifacts.first(where: { $0.kind == .executable }) else {
            throw CheckPluginError("building missive-check (\(configuration)) failed")
        }
        let process = Process()
        process.executableURL = tool.url
        process.arguments = files + extractor.remainingArguments
        try process.run()
        process.waitUntilExit()
        // missive-check: 1 when a check fails, 2 for a usage error (which it has already explained).
        switch process.terminationStatus {
        case 0: return
        case 2: throw CheckPluginError("usage error in the options given to missive-check, which printed the reason; `missive-check --help` lists them")
        case let status: throw CheckPluginError("conformance checks did not pass (missive-check exited with code \(status))")
        }
    }
}

struct CheckPluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
