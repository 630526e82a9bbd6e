import Foundation
import Missive
import MissiveRendering

/// Views: what reading a plugin's view document costs, and measuring and drawing a transcript.
enum Views {
    struct Result {
        /// Seconds per pass over the messages, for each stage.
        var pluginViews = Samples(values: [])
        var readDocuments = Samples(values: [])
        var sanitizeTrees = Samples(values: [])
        var transcript = Samples(values: [])
        var measureTerminal = Samples(values: [])
        var estimateHTML = Samples(values: [])
        var renderHTML = Samples(values: [])
        var renderTerminal = Samples(values: [])
        var messages = 0
        var documents = 0
        var htmlBytes = 0
    }

    /// Decodes `count` corpus lines once, then times each stage `runs` times (plus a warm-up).
    static func measure(registry: MessageRegistry, corpus: Corpus, count: Int, runs: Int) -> Result {
        let messages = (0..<count).compactMap { try? registry.decode(line: corpus.lines[$0 % corpus.lines.count].missive) }
        let plugin = messages.compactMap { $0.content as? PluginContent }
        // The documents as the plugins wrote them, and the trees read from them.
        let documents = plugin.compactMap { try? $0.checkedView() }
        let trees = documents.compactMap { ViewDocument.read($0).element }
        var result = Result()
        result.messages = messages.count
        result.documents = documents.count
        func time(_ body: () -> Int) -> Double {
            let start = now()
            let sum = body()
            let elapsed = now() - start
            if sum == Int.min { print("") }  // keeps the work observable
            return elapsed
        }
        for run in 0...runs {
            let pluginViews = time { plugin.reduce(0) { $0 &+ ($1.view?.elementCount ?? 0) } }
            let read = time { documents.reduce(0) { $0 &+ (ViewDocument.read($1).element?.elementCount ?? 0) } }
            let sanitize = time {
                trees.reduce(0) { sum, tree in
                    var sanitizer = ViewSanitizer()
                    return sum &+ (sanitizer.sanitize(tree)?.elementCount ?? 0)
                }
            }
            var transcript: Transcript?
            let layout = time {
                transcript = Transcript(messages: messages, currentUserID: "u3")
                return transcript?.rows.count ?? 0
            }
            let views = transcript!.rows.compactMap { row -> ViewElement? in
                if case .message(let item) = row, case .view(let view) = item.body { return view }
                return nil
            }
            let measure = time { views.reduce(0) { $0 &+ TerminalRenderer.measure($1, maxWidth: 56).rows } }
            let estimate = time { views.reduce(0) { $0 &+ Int(HTMLRenderer.estimate($1, maxWidth: 480).height) } }
            var html = ""
            let render = time {
                html = HTMLRenderer(title: "benchmark").render(transcript!)
                return html.utf8.count
            }
            let terminal = time { TerminalRenderer(width: 80).render(transcript!).utf8.count }
            if run == 0 { continue }
            result.pluginViews.values.append(pluginViews)
            result.readDocuments.values.append(read)
            result.sanitizeTrees.values.append(sanitize)
            result.transcript.values.append(layout)
            result.measureTerminal.values.append(measure)
            result.estimateHTML.values.append(estimate)
            result.renderHTML.values.append(render)
            result.renderTerminal.values.append(terminal)
            result.htmlBytes = html.utf8.count
        }
        return result
    }

    static func report(_ result: Result) {
        func ms(_ samples: Samples) -> String { Samples(values: samples.values.map { $0 * 1000 }).summary(1) }
        func perView(_ samples: Samples, _ count: Int) -> String { format(samples.median / Double(max(count, 1)) * 1e6, 2) }
        print("## Views: \(result.messages) decoded messages, \(result.documents) view documents from the sample plugins\n")
        print("| stage | ms per pass, median (min–max) | µs per view |")
        print("|---|---|---|")
        print("| plugin views: call the view function, read the JSON, sanitize | \(ms(result.pluginViews)) | \(perView(result.pluginViews, result.documents)) |")
        print("| read the same documents (parse + sanitize), no plugin call | \(ms(result.readDocuments)) | \(perView(result.readDocuments, result.documents)) |")
        print("| sanitize the same trees, no JSON (what builder callbacks would still do) | \(ms(result.sanitizeTrees)) | \(perView(result.sanitizeTrees, result.documents)) |")
        print("")
        let total = result.transcript.median + result.measureTerminal.median + result.renderHTML.median
        print("| stage, all \(result.messages) messages | ms per pass, median (min–max) |")
        print("|---|---|")
        print("| lay out the transcript (views, groups, decorations) | \(ms(result.transcript)) |")
        print("| measure every view in terminal cells | \(ms(result.measureTerminal)) |")
        print("| estimate every view's HTML size | \(ms(result.estimateHTML)) |")
        print("| draw the HTML page (\(result.htmlBytes / 1024) KiB) | \(ms(result.renderHTML)) |")
        print("| draw for a terminal | \(ms(result.renderTerminal)) |")
        print("| **lay out + measure + HTML, the sum of medians** | **\(format(total * 1000, 1))** |")
        print("")
    }
}
