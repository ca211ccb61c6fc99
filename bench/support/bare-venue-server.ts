// The baseline: plain Express doing the same single-row read as GET /venues/:id, with no middleware.
import express from 'express';
import postgres from 'postgres';

const sql = postgres(process.env.DATABASE_URL!, { max: 10 });
const app = express();
app.get('/healthz', (_req, res) => {
  res.json({ ok: true });
});
app.get('/venues/:id', async (req, res) => {
  const [venue] = await sql`select * from venues where id = ${req.params.id}`;
  res.json({ venue });
});
app.listen(Number(process.env.PORT));
