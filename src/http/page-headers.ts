import type { NextFunction, Request, Response } from 'express';

/** The API reference (Swagger UI): its own scripts and styles (it sets inline styles), its images as data: URLs. */
export const docsPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'none'";

/** Bull Board: its bundle, inline styles, and the Google font its page links. */
export const adminBoardPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline' https://fonts.googleapis.com; font-src 'self' https://fonts.gstatic.com; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'";

/**
 * Headers of the HTML pages and their assets (docs/security.md "Pages"): no content-type sniffing,
 * never framed (clickjacking), and a Content-Security-Policy that runs only the page's own scripts.
 */
export const pageHeaders = (policy: string) => (_req: Request, res: Response, next: NextFunction) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', policy);
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};
