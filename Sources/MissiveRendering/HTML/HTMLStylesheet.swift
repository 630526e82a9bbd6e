/// The standard stylesheet of the HTML renderer, written from ``HTMLMetrics`` so that the page and
/// ``HTMLRenderer/estimate(_:maxWidth:)`` use the same font sizes, line heights, paddings and gaps.
///
/// It is the default ``HTMLComponents/stylesheet``. It has a light and a dark palette (chosen by
/// `prefers-color-scheme`) and loads nothing: no web font, no image, no `@import`.
public enum HTMLStylesheet {
    /// The fonts of running text: common system fonts, then the metric-compatible free fonts of Linux.
    public static let textFonts = #"-apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, "Liberation Sans", system-ui, sans-serif"#
    /// The fixed-width fonts of code.
    public static let codeFonts = #"ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace"#

    /// The number of colours avatars and author names are drawn in (`avatar-c0` … `avatar-c5`).
    public static let senderColorCount = 6

    /// The standard stylesheet.
    public static let standard: String = make()

    /// `15px`: a length in CSS pixels, without a needless `.0`.
    static func px(_ value: Double) -> String {
        let hundredths = (value * 100).rounded() / 100
        return hundredths == hundredths.rounded() ? "\(Int(hundredths))px" : "\(hundredths)px"
    }

    private static func font(_ font: HTMLMetrics.Font) -> String {
        "font-size: \(px(font.size)); line-height: \(px(font.lineHeight));"
    }

    private static func make() -> String {
        typealias M = HTMLMetrics
        let bubble = M.bubblePadding
        let button = M.buttonPadding
        let badge = M.badgePadding
        let senderColors = ["#c0392b", "#1e8449", "#b9770e", "#2471a3", "#8e44ad", "#117a65"]
        var gaps = ""
        for spacing in 0...HTMLStackSpacing.maximum { gaps += ".el-gap-\(spacing) { gap: \(px(Double(spacing) * M.spacingUnit)); }\n" }
        var colors = ""
        for (index, color) in senderColors.prefix(senderColorCount).enumerated() {
            colors += ".avatar-c\(index) { background: \(color); }\n.author-c\(index) { color: \(color); }\n"
        }
        return """
            :root {
              color-scheme: light dark;
              --bg: #eef0f3; --fg: #1b1d21; --muted: #5f6670; --rule: #c9ced6;
              --bubble: #ffffff; --bubble-border: #d9dde3; --own: #d8ebff; --own-border: #b3d4f5;
              --link: #0a58b0; --quote-bar: #7f9cc4; --quote-bg: rgba(0, 0, 0, 0.045);
              --card: #fff7dc; --card-border: #d4a514; --code-bg: rgba(0, 0, 0, 0.05);
              --track: #dde1e7; --fill: #2e9d5b; --button: #f3f5f8; --button-border: #c5cbd3;
              --image: #e3e7ed; --image-stripe: #d6dbe3;
              --badge-neutral: #e4e7eb; --badge-neutral-fg: #3d434b; --badge-info: #dbeafe; --badge-info-fg: #1e4f91;
              --badge-success: #dcf3e4; --badge-success-fg: #1d6b3a; --badge-warning: #fdf0c9; --badge-warning-fg: #7a5800;
              --badge-danger: #fde0dd; --badge-danger-fg: #a0251b;
            }
            @media (prefers-color-scheme: dark) {
              :root {
                --bg: #14171b; --fg: #e4e7eb; --muted: #9aa3ad; --rule: #3a4048;
                --bubble: #22262c; --bubble-border: #2f343b; --own: #1d3a5c; --own-border: #2a4f7a;
                --link: #79b4ff; --quote-bar: #5d7ba5; --quote-bg: rgba(255, 255, 255, 0.06);
                --card: #3a3214; --card-border: #a88412; --code-bg: rgba(255, 255, 255, 0.08);
                --track: #363c44; --fill: #3fbf73; --button: #2b3037; --button-border: #444b55;
                --image: #2b3037; --image-stripe: #323840;
                --badge-neutral: #343a42; --badge-neutral-fg: #d5dae0; --badge-info: #1c3656; --badge-info-fg: #a9cdfb;
                --badge-success: #173b26; --badge-success-fg: #9be0b5; --badge-warning: #44370c; --badge-warning-fg: #f3d478;
                --badge-danger: #4a1c18; --badge-danger-fg: #f5b3ab;
              }
            }
            *, *::before, *::after { box-sizing: border-box; }
            body { margin: 0; background: var(--bg); color: var(--fg); font-family: \(textFonts); \(font(M.body)) }
            .transcript { max-width: \(px(M.transcriptMaxWidth)); margin: 0 auto; padding: 16px; }
            .transcript-header h1 { margin: 0 0 8px; font-size: 20px; line-height: 28px; font-weight: 700; }
            .transcript-empty { color: var(--muted); }
            .date-separator { display: flex; align-items: center; gap: 12px; margin: 20px 0 12px; color: var(--muted); font-size: 13px; line-height: 18px; font-weight: 600; }
            .date-separator::before, .date-separator::after { content: ""; flex: 1 1 0; border-top: 1px solid var(--rule); }
            .msg { display: flex; flex-direction: column; align-items: flex-start; margin: 0 0 2px; }
            .msg:not(.msg-continuation) { margin-bottom: 14px; }
            .msg-flipped { align-items: flex-end; }
            .author { margin: 0 0 2px \(px(M.avatarSize + M.avatarGap)); font-size: 13px; line-height: 18px; font-weight: 700; overflow-wrap: anywhere; }
            .msg-row { display: flex; align-items: flex-end; gap: \(px(M.avatarGap)); max-width: 100%; }
            .avatar-slot { flex: 0 0 \(px(M.avatarSize)); width: \(px(M.avatarSize)); }
            .avatar { display: flex; align-items: center; justify-content: center; width: \(px(M.avatarSize)); height: \(px(M.avatarSize)); border-radius: 50%; color: #ffffff; font-size: 13px; line-height: 1; font-weight: 700; }
            .msg-content { display: flex; flex-direction: column; align-items: flex-start; min-width: 0; max-width: 100%; }
            .bubble { flex: 0 1 auto; min-width: 0; max-width: \(px(M.bubbleMaxWidth)); padding: \(px(bubble.vertical)) \(px(bubble.horizontal)); border: \(px(bubble.border)) solid var(--bubble-border); border-radius: 16px; background: var(--bubble); }
            .bubble-tail { border-bottom-left-radius: 4px; }
            .msg-flipped .bubble { background: var(--own); border-color: var(--own-border); }
            .msg-flipped .bubble-tail { border-bottom-left-radius: 16px; border-bottom-right-radius: 4px; }
            .bubble-unsupported, .msg-flipped .bubble-unsupported { background: var(--card); border: \(px(bubble.border)) dashed var(--card-border); }
            .msg-footer { display: flex; gap: 8px; margin: 2px 0 0 \(px(M.avatarSize + M.avatarGap)); color: var(--muted); font-size: 12px; line-height: 16px; }
            .msg-flipped .author, .msg-flipped .msg-footer { margin-left: 0; }
            .timestamp { font-variant-numeric: tabular-nums; }
            .thread-info { color: var(--link); font-weight: 600; }
            .quote { align-self: stretch; margin: 0 0 6px; padding: 4px 8px; border-left: 3px solid var(--quote-bar); border-radius: 4px; background: var(--quote-bg); \(font(M.caption)) min-width: 0; }
            .quote-author { font-weight: 700; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
            .quote-text { color: var(--muted); overflow: hidden; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; line-clamp: 2; overflow-wrap: anywhere; }
            .quote-missing .quote-text { font-style: italic; }
            .quote-media { display: inline-block; margin-top: 2px; padding: 0 6px; border-radius: 4px; background: var(--image); color: var(--fg); font-size: 12px; }
            .unsupported { display: flex; flex-direction: column; gap: 2px; min-width: 0; }
            .unsupported-title { font-style: italic; overflow-wrap: anywhere; }
            .unsupported-detail { color: var(--muted); \(font(M.caption)) overflow-wrap: anywhere; }
            .el-stack { display: flex; min-width: 0; max-width: 100%; }
            .el-stack-vertical { flex-direction: column; align-items: flex-start; }
            .el-stack-horizontal { flex-direction: row; flex-wrap: wrap; align-items: center; }
            .actions { display: flex; flex-wrap: wrap; gap: \(px(M.spacingUnit)); margin-top: \(px(M.spacingUnit)); max-width: 100%; }
            .el-stack > * { min-width: 0; max-width: 100%; }
            \(gaps)\
            .el-text { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
            .el-text-body { \(font(M.body)) }
            .el-text-title { \(font(M.title)) font-weight: 700; }
            .el-text-caption { \(font(M.caption)) color: var(--muted); }
            .el-text-code { \(font(M.code)) font-family: \(codeFonts); background: var(--code-bg); border-radius: 3px; }
            .el-strong { font-weight: 700; }
            .el-italic { font-style: italic; }
            .el-clamp { display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; }
            .el-link { display: inline-block; max-width: 100%; \(font(M.body)) color: var(--link); text-decoration: underline; white-space: pre-wrap; overflow-wrap: anywhere; }
            .el-link-blocked { color: var(--fg); text-decoration: none; }
            .el-image { margin: 0; max-width: 100%; }
            .el-image-box { display: flex; align-items: center; justify-content: center; width: 100%; overflow: hidden; padding: 4px; border-radius: 8px; text-align: center; color: var(--muted); \(font(M.caption)) background: repeating-linear-gradient(135deg, var(--image) 0 12px, var(--image-stripe) 12px 24px); }
            .el-image-caption { margin-top: \(px(M.imageCaptionGap)); \(font(M.caption)) color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
            .el-image-caption a { color: var(--link); }
            .el-facts { display: grid; grid-template-columns: max-content minmax(0, auto); column-gap: \(px(M.factColumnGap)); row-gap: \(px(M.factRowGap)); margin: 0; \(font(M.body)) }
            .el-facts dt { max-width: \(px(M.factLabelMaxWidth)); font-weight: 700; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
            .el-facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
            .el-progress { display: flex; flex-direction: column; gap: \(px(M.progressGap)); min-width: 0; }
            .el-progress-label { \(font(M.body)) overflow-wrap: anywhere; }
            .el-progress-detail { color: var(--muted); }
            .el-progress-row { display: flex; align-items: center; gap: \(px(M.progressPercentGap)); height: \(px(M.caption.lineHeight)); }
            .el-progress-bar { flex: 0 1 \(px(M.progressBar.width)); width: \(px(M.progressBar.width)); height: \(px(M.progressBar.height)); border-radius: 4px; background: var(--track); overflow: hidden; }
            .el-progress-fill { height: 100%; background: var(--fill); }
            .el-progress-percent { \(font(M.caption)) color: var(--muted); font-variant-numeric: tabular-nums; }
            .el-button { max-width: 100%; padding: \(px(button.vertical)) \(px(button.horizontal)); border: \(px(button.border)) solid var(--button-border); border-radius: 8px; background: var(--button); color: var(--fg); font-family: inherit; \(font(M.button)) font-weight: 600; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: not-allowed; }
            .el-divider { align-self: stretch; min-width: \(px(M.dividerMinWidth)); height: 0; margin: \(px(M.dividerMargin)) 0; border: 0; border-top: 1px solid var(--rule); }
            .el-stack-horizontal > .el-divider { min-width: 0; width: 0; height: auto; margin: 0 \(px(M.dividerMargin)); border-top: 0; border-left: 1px solid var(--rule); }
            .el-badge { display: inline-block; max-width: 100%; padding: \(px(badge.vertical)) \(px(badge.horizontal)); border-radius: 10px; \(font(M.badge)) font-weight: 700; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; background: var(--badge-neutral); color: var(--badge-neutral-fg); }
            .el-badge-info { background: var(--badge-info); color: var(--badge-info-fg); }
            .el-badge-success { background: var(--badge-success); color: var(--badge-success-fg); }
            .el-badge-warning { background: var(--badge-warning); color: var(--badge-warning-fg); }
            .el-badge-danger { background: var(--badge-danger); color: var(--badge-danger-fg); }
            \(colors)
            """
    }
}
