// Scenario: a server that starts but never prints "listening on ..." (for
// example, it binds the wrong port or blocks on something at start-up).
console.log(`scenario never-listens: pid ${process.pid}, warming up forever`)
setInterval(() => {}, 60_000)
