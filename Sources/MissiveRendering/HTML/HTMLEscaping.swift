import Missive

/// The one escaping function of the HTML renderer, and the URL gate its links go through.
///
/// Every string that comes from a sender or a plugin (view strings, author names, times, card texts, quote
/// texts, message ids in `data-` attributes) reaches the page through ``escape(_:)``: in text and in
/// attribute values alike, since it escapes all five characters that matter in either (`&`, `<`, `>`, `"`,
/// `'`). The renderer writes every attribute value between double quotes.
public enum HTMLEscaping {
    /// `text` safe to write as HTML text or as a quoted attribute value.
    ///
    /// - `&`, `<`, `>`, `"` and `'` become `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`;
    /// - a code point that cleaned text never holds (`TextHygiene.isUnsafe(_:)`: C0 and C1 controls, DEL,
    ///   bidi embeddings, overrides and isolates, line and paragraph separators) becomes U+FFFD, except tab
    ///   and line feed, which are kept. Sanitized views hold none of them; this is a second line of defence
    ///   for strings that did not go through `ViewSanitizer`.
    public static func escape(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                if TextHygiene.isUnsafe(scalar) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// ` name="value"`, the value escaped: what the renderer appends to a start tag for each attribute.
    /// `name` is the renderer's own, never a sender's.
    public static func attribute(_ name: String, _ value: some StringProtocol) -> String {
        " \(name)=\"\(escape(value))\""
    }

    /// `url`, when it may become an `href`: an http or https URL (`ViewSanitizer.isAllowedURL(_:limits:)`);
    /// `nil` for anything else, such as `javascript:`, `data:` or `file:` URLs. Views reaching a renderer are
    /// sanitized already; the renderer checks again, so that a tree built by hand cannot bypass the rule.
    public static func allowedURL(_ url: String) -> String? {
        ViewSanitizer.isAllowedURL(url) ? url : nil
    }
}
