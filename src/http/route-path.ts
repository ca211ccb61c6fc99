/** A route path's match against a request path: its parameters, or null when the path is not the route's. */
export type RoutePathMatcher = (pathname: string) => Record<string, string> | null;

/**
 * Compiles a route path made of literal segments and `:name` parameters (`/venues/:id/tables`) the
 * way Express matches it for our routers: case-sensitive, one optional trailing slash, a parameter
 * takes one non-empty segment and is percent-decoded. A segment that does not decode throws the
 * URIError of decodeURIComponent, as the Express router passes it on (the error handler answers 404).
 */
export function compileRoutePath(path: string): RoutePathMatcher {
  const names: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  const pattern = new RegExp(`^${source}/?$`);
  return (pathname) => {
    const found = pattern.exec(pathname);
    if (!found) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) params[names[i]] = decodeURIComponent(found[i + 1]);
    return params;
  };
}
