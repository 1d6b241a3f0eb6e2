/**
 * The line splitter of `ferry enqueue --stdin`, fed chunk by chunk as a pipe would: where lines
 * end, how they decode, and when a line that grows past the limit is reported.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { LineSplitter } from '../../src/cli/line-splitter.js'

type Event = ['line', number, string, number] | ['too long', number]

function splitter(maxLineBytes: number): { lines: LineSplitter; events: Event[] } {
  const events: Event[] = []
  const lines = new LineSplitter({
    maxLineBytes,
    onLine: (lineNumber, line, byteLength) => events.push(['line', lineNumber, line, byteLength]),
    onTooLong: (lineNumber) => events.push(['too long', lineNumber]),
  })
  return { lines, events }
}

test('numbers every line, blank ones included, strips a \\r before the newline and keeps a last line without one', () => {
  const { lines, events } = splitter(100)
  lines.push(Buffer.from('one\r\n\ntw'))
  lines.push(Buffer.from('o\nthree'))
  lines.end()
  assert.deepEqual(events, [
    ['line', 1, 'one', 4],
    ['line', 2, '', 0],
    ['line', 3, 'two', 3],
    ['line', 4, 'three', 5],
  ])
})

test('decodes a character whose UTF-8 bytes are split between two chunks', () => {
  const { lines, events } = splitter(100)
  const bytes = Buffer.from('é🚢\n')
  for (const byte of bytes) lines.push(Buffer.from([byte]))
  lines.end()
  assert.deepEqual(events, [['line', 1, 'é🚢', 6]])
})

test('adds no line at the end when the input ends with a newline', () => {
  const { lines, events } = splitter(100)
  lines.push(Buffer.from('a\n'))
  lines.end()
  assert.deepEqual(events, [['line', 1, 'a', 1]])
})

test('keeps a line of exactly maxLineBytes', () => {
  const { lines, events } = splitter(10)
  lines.push(Buffer.from('0123456789\n'))
  assert.deepEqual(events, [['line', 1, '0123456789', 10]])
})

test('reports a line once, on the chunk that takes it past maxLineBytes, and goes on with the next line', () => {
  const { lines, events } = splitter(10)
  lines.push(Buffer.from('ok\n01234'))
  lines.push(Buffer.from('56789'))
  assert.deepEqual(events, [['line', 1, 'ok', 2]], 'ten bytes are not too long yet')
  lines.push(Buffer.from('X'))
  assert.deepEqual(events.at(-1), ['too long', 2], 'reported before the line ends')
  for (let i = 0; i < 1000; i++) lines.push(Buffer.from('more of the same line '))
  lines.push(Buffer.from('end of it\nnext\n'))
  lines.end()
  assert.deepEqual(events, [
    ['line', 1, 'ok', 2],
    ['too long', 2],
    ['line', 3, 'next', 4],
  ])
})

test('reports a too-long last line that has no newline once, and nothing more at the end', () => {
  const { lines, events } = splitter(4)
  lines.push(Buffer.from('a\nbbbbbbbb'))
  lines.end()
  assert.deepEqual(events, [
    ['line', 1, 'a', 1],
    ['too long', 2],
  ])
})
