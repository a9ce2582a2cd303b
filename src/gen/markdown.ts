/**
 * Markdown as GitHub renders it, for the generated pages and the checks of the hand-written ones.
 */

/**
 * The anchor GitHub gives a heading: lower case, HTML tags and punctuation dropped, spaces as
 * `-`. A page's second heading of the same text gets `-1`, its third `-2` (not done here).
 */
export function headingAnchor(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}
