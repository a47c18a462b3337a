// Text into the grader's HTML pages (the scores report, a history's sequence
// diagram): every character that could open a tag, an entity or end an
// attribute becomes a numeric reference, so learner-controlled text (a
// check's message, a server's answer, a learner's folder name) stays text.
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
