import { timestamp } from 'drizzle-orm/pg-core';

// Timestamps have millisecond precision (precision 3), like JavaScript dates: a keyset cursor
// carrying a timestamp then compares exactly, whoever wrote the row.
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });
