// Scenario: a server that dies before it listens (a syntax error, a missing
// module, a port in use): the grader must say so and show what it printed.
console.error('scenario exits-at-start: cannot open the database, giving up')
process.exit(3)
