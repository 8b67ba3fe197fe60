import { describe, expect, it } from 'vitest';
import { jsonErrorLocation, jsonErrorOffset } from '../../src/config/json-location.js';

describe('JSON syntax errors are located without quoting the text', () => {
  it('agrees with JSON.parse on what is valid', () => {
    const samples = ['{}', '[]', '{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"]}', ' 0 ', '{"a":1,}', '[1,]', "{'a':1}", '{"a":01}', '"\t"', '{"a" 1}', 'nul', '[1 2]', '{"a":"\\x"}', '-', '1.', '{"a":1}}'];
    for (const text of samples) {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonErrorOffset(text) === undefined, text).toBe(valid);
    }
  });

  it('names the line and column, never the content', () => {
    expect(jsonErrorLocation('{\n  "access_token": \'tok-SECRET-123\'\n}')).toBe('line 2, column 19');
    expect(jsonErrorLocation('{"a": [1, 2')).toBe('unexpected end');
    expect(jsonErrorLocation('{"a": 1} trailing')).toBe('line 1, column 10');
  });
});
